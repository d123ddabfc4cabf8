import { RewindableError, RewindableErrorCode } from './errors.js';
import { canonicalUuid } from './paths.js';

/**
 * Which session a manager opens, one value per choice:
 * - `{ id? }` starts a new session (with this UUID; `SESSION_EXISTS` if it exists);
 * - `{ resume, readOnly? }` reopens an existing one (`SESSION_NOT_FOUND` if it
 *   does not exist); `readOnly` opens it without its lock, to list, diff and
 *   dry-run while another process writes, and anything that writes fails with `READ_ONLY`;
 * - `'continue'` reopens the project's most recent session (only with
 *   `CheckpointManager.open()`: the id is not known before the store is read).
 */
export type SessionOption = { id?: string; resume?: never; readOnly?: never } | { resume: string; readOnly?: boolean; id?: never } | 'continue';

/** The deprecated options `session` replaces. */
export interface SessionAliases {
  sessionId?: string;
  resume?: string;
  continue?: boolean;
  readOnly?: boolean;
}

/** How the session is opened, once `'continue'` is resolved to an id. */
export type OpenedSession = { mode: 'create'; id: string | undefined } | { mode: 'resume' | 'read'; id: string };

const aliasNames = ['sessionId', 'resume', 'continue', 'readOnly'] as const;

/** The one session choice `options` make, from `session` or from its deprecated aliases. */
export function sessionChoice(options: SessionAliases & { session?: unknown }): SessionOption {
  const aliases = aliasNames.filter((name) => options[name] !== undefined);
  if (options.session === undefined) return choiceOfAliases(options);
  if (aliases.length > 0) {
    throw invalid(`Pass session, or the deprecated ${aliases.join(' and ')}, not both: session replaces sessionId, resume, continue and readOnly.`);
  }
  return checkedSession(options.session);
}

/** The session a constructor opens: `'continue'` needs the store read first. */
export function openedSession(choice: SessionOption): OpenedSession {
  if (choice === 'continue') {
    throw invalid("session 'continue' finds the session to reopen by reading the store: use `await CheckpointManager.open({ cwd, session: 'continue' })`.");
  }
  if (choice.resume !== undefined) return { mode: choice.readOnly === true ? 'read' : 'resume', id: choice.resume };
  return { mode: 'create', id: choice.id };
}

function choiceOfAliases(options: SessionAliases): SessionOption {
  if (options.sessionId !== undefined && options.resume !== undefined) {
    throw invalid('Pass either sessionId (to start a new session) or resume (to reopen one), not both.');
  }
  if (options.continue === true) {
    if (options.sessionId !== undefined || options.resume !== undefined) throw invalid('continue reopens the most recent session: pass it without sessionId or resume.');
    return 'continue';
  }
  if (options.readOnly === true && options.resume === undefined) throw invalid('readOnly needs resume: the id of the session to open.');
  return checkedSession(options.resume !== undefined ? { resume: options.resume, readOnly: options.readOnly } : { id: options.sessionId });
}

function checkedSession(session: unknown): SessionOption {
  if (session === 'continue') return session;
  if (typeof session !== 'object' || session === null || Array.isArray(session)) {
    throw invalid(`session must be { id } to start a new session, { resume } to reopen one, or 'continue'; got ${JSON.stringify(session)}.`);
  }
  const { id, resume, readOnly, ...others } = session as Record<string, unknown>;
  const unknown = Object.keys(others)[0];
  if (unknown !== undefined) throw invalid(`session has no field ${JSON.stringify(unknown)}: it takes { id } to start a new session, or { resume, readOnly } to reopen one.`);
  if (id !== undefined && resume !== undefined) throw invalid('session takes { id } to start a new session or { resume } to reopen one, not both.');
  if (readOnly !== undefined && typeof readOnly !== 'boolean') throw invalid('session.readOnly must be true or false.');
  if (resume !== undefined) {
    return { resume: canonicalUuid(resume, 'session id to resume'), readOnly: readOnly ?? false };
  }
  if (readOnly === true) throw invalid('session.readOnly needs session.resume: the id of the session to open.');
  if (id === undefined) return {};
  return { id: canonicalUuid(id, 'session id') };
}

function invalid(message: string): RewindableError<'INVALID_OPTIONS'> {
  return new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `Invalid CheckpointManager options: ${message}`, { details: { option: 'session' } });
}
