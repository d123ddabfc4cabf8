import fs from 'node:fs';
import path from 'node:path';
import { RewindableError, RewindableErrorCode } from '../errors.js';

/** A hook handler in Claude Code's settings. */
interface CommandHook {
  type: 'command';
  command: string;
  [other: string]: unknown;
}

/** One matcher group of an event in Claude Code's settings (`hooks.<Event>[]`). */
interface MatcherGroup {
  matcher?: string;
  hooks: CommandHook[];
  [other: string]: unknown;
}

/** The events the hooks need, each with its tool matcher: what `rewindable hook` does with them is in docs/hooks.md. */
export const claudeCodeEvents: ReadonlyArray<{ event: string; matcher?: string }> = [
  { event: 'UserPromptSubmit' },
  { event: 'PreToolUse', matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash' },
  { event: 'PostToolUse', matcher: 'Bash' },
  // A command that exits non-zero may still have changed files: its scan after it runs too.
  { event: 'PostToolUseFailure', matcher: 'Bash' },
];

/** The `hooks` object for Claude Code's settings that runs `command` (`… hook`) on every event the hooks need. */
export function claudeCodeHooks(command: string): Record<string, MatcherGroup[]> {
  return Object.fromEntries(
    claudeCodeEvents.map(({ event, matcher }) => [event, [{ ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command' as const, command }] }]]),
  );
}

/**
 * Whether a hook handler is ours: the command being installed, or one that
 * runs `rewindable … hook` (an install from another path or version).
 */
export function isOurHook(handler: unknown, command: string): boolean {
  if (typeof handler !== 'object' || handler === null) return false;
  const given = (handler as { command?: unknown }).command;
  if (typeof given !== 'string') return false;
  return given.trim() === command.trim() || runsRewindableHook(given);
}

/**
 * A command whose program is rewindable (`rewindable`, `…/.bin/rewindable`,
 * `…/rewindable/dist/cli.js`) with `hook` right after it: never a command of
 * someone else's that merely has the two words in it (`my-rewindable-wrapper hook`).
 */
function runsRewindableHook(command: string): boolean {
  const words = command.trim().split(/\s+/).map((word) => word.replace(/^['"]|['"]$/g, ''));
  return words.some((word, index) => words[index + 1] === 'hook' && (path.basename(word) === 'rewindable' || /(?:^|\/)rewindable\/dist\/cli\.js$/.test(word)));
}

export interface SettingsChange {
  file: string;
  /** False when the file already said exactly this (a second install, an uninstall of nothing). */
  changed: boolean;
}

/**
 * Adds our hooks to a settings file, or takes them out, keeping everything
 * else: other keys, other events, other hooks of the same events (ours are
 * replaced where they were, so a second install changes nothing), and the
 * file's indentation. A file that is not a JSON object is refused, never
 * overwritten. A settings file that is a symbolic link (a dotfiles manager's)
 * is written where it leads and stays a link.
 */
export function changeSettings(file: string, command: string, action: 'install' | 'uninstall'): SettingsChange {
  const target = settingsTarget(file);
  const before = readSettingsText(target);
  const settings = before === undefined ? {} : parseSettings(file, before);
  const hooks = objectField(settings, 'hooks', file);
  const hooksWereEmpty = 'hooks' in settings && Object.keys(hooks).length === 0;
  const wanted = action === 'install' ? claudeCodeHooks(command) : {};
  for (const event of new Set([...Object.keys(hooks), ...Object.keys(wanted)])) {
    const groups = hooks[event];
    if (groups !== undefined && !Array.isArray(groups)) throw invalidSettings(file, `"hooks.${event}" is not an array`);
    const { kept, firstOursAt, firstOurs } = withoutOurs((groups ?? []) as unknown[], command);
    // Fields a user added to our entry (a `timeout`, a `statusMessage`) stay; the command is the one installed now.
    const ours = (wanted[event] ?? []).map((group) => ({ ...group, hooks: group.hooks.map((handler) => ({ ...firstOurs, ...handler })) }));
    const next = [...kept];
    next.splice(firstOursAt ?? kept.length, 0, ...ours);
    if (next.length > 0) hooks[event] = next;
    else if (groups !== undefined) delete hooks[event];
  }
  if (Object.keys(hooks).length > 0 || action === 'install') settings.hooks = hooks;
  else if (!hooksWereEmpty) delete settings.hooks; // an uninstall that took out the last hooks: no empty object left behind
  if (before === undefined && action === 'uninstall') return { file, changed: false };
  const changed = before === undefined || before.trim() === '' || JSON.stringify(JSON.parse(before)) !== JSON.stringify(settings);
  if (changed) writeAtomically(target, `${JSON.stringify(settings, null, indentationOf(before))}${before === undefined || before.endsWith('\n') ? '\n' : ''}`);
  return { file, changed };
}

/** Groups with our handlers taken out (a group left empty goes), where the first of ours was, and that handler. */
function withoutOurs(groups: unknown[], command: string): { kept: unknown[]; firstOursAt: number | undefined; firstOurs: object | undefined } {
  const kept: unknown[] = [];
  let firstOursAt: number | undefined;
  let firstOurs: object | undefined;
  for (const group of groups) {
    const handlers = typeof group === 'object' && group !== null ? (group as { hooks?: unknown }).hooks : undefined;
    if (!Array.isArray(handlers) || !handlers.some((handler) => isOurHook(handler, command))) {
      kept.push(group);
      continue;
    }
    firstOursAt ??= kept.length;
    firstOurs ??= handlers.find((handler) => isOurHook(handler, command)) as object;
    const others = handlers.filter((handler) => !isOurHook(handler, command));
    if (others.length > 0) kept.push({ ...(group as object), hooks: others });
  }
  return { kept, firstOursAt, firstOurs };
}

/**
 * The file to read and write for `file`: itself, or where it leads when it is
 * a link. A link that dangles, or leads to a directory or a FIFO (whose read
 * would wait for a writer), is refused: what the user meant it to be is theirs to say.
 */
function settingsTarget(file: string): string {
  const entry = fs.lstatSync(file, { throwIfNoEntry: false });
  if (entry === undefined) return file;
  if (entry.isFile()) return file;
  if (!entry.isSymbolicLink()) throw invalidSettings(file, 'it is not a regular file');
  const leadsTo = path.resolve(path.dirname(file), fs.readlinkSync(file));
  let target: string;
  try {
    target = fs.realpathSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw invalidSettings(file, `it is a symbolic link to ${leadsTo}, which does not exist; create that file (it may be empty) or remove the link`);
    throw new RewindableError(RewindableErrorCode.FILE_IO, `Could not follow the link ${file}: ${(error as Error).message}`, { cause: error, details: { path: file } });
  }
  if (!fs.statSync(target).isFile()) throw invalidSettings(file, `it is a symbolic link to ${leadsTo}, which is not a regular file`);
  return target;
}

function readSettingsText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new RewindableError(RewindableErrorCode.FILE_IO, `Could not read ${file}: ${(error as Error).message}`, { cause: error });
  }
}

function parseSettings(file: string, text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw invalidSettings(file, `it is not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidSettings(file, 'it is not a JSON object');
  return value as Record<string, unknown>;
}

function objectField(settings: Record<string, unknown>, field: string, file: string): Record<string, unknown> {
  const value = settings[field];
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidSettings(file, `"${field}" is not an object`);
  return value as Record<string, unknown>;
}

function invalidSettings(file: string, why: string): RewindableError {
  return new RewindableError(RewindableErrorCode.INVALID_OPTIONS, `${file} was left as it is: ${why}. Fix it, or add the hooks by hand (rewindable hooks install claude-code --print).`);
}

/** The indentation of the file's first indented line (two spaces for a new file). */
function indentationOf(text: string | undefined): string | number {
  const found = text === undefined ? undefined : /\n([ \t]+)\S/.exec(text)?.[1];
  return found ?? 2;
}

/** A temporary file beside it, renamed over it: an interrupted write leaves the old settings, never half of them. */
function writeAtomically(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let mode: number | undefined;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch {
    // A new file.
  }
  const temporary = `${file}.rewindable-${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, text, mode !== undefined ? { mode } : {});
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw new RewindableError(RewindableErrorCode.FILE_IO, `Could not write ${file}: ${(error as Error).message}`, { cause: error });
  }
}
