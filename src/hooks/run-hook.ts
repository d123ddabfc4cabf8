import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { resolveCapture, type ResolvedCapture } from '../capture/capture-options.js';
import { recordCommandChanges } from '../capture/capture-command.js';
import { checkpointWithScan, snapshotScope } from '../capture/capture-scan.js';
import { recordMessage, recordUserMessage } from '../conversation/conversation.js';
import { canonicalPath } from '../paths.js';
import type { Session } from '../session/session.js';
import { trackFirstBackup } from '../session/track-edit.js';
import { isUuidText, rewindableSessionIdOf } from './agent-session-id.js';
import { proceed, type HookAnswer } from './hook-answer.js';
import type { HookEvent } from './hook-event.js';
import { openHookSession, type HookSession } from './hook-session.js';
import { ShellScanState } from './shell-scan-state.js';

export interface RunHookOptions {
  storeDir: string;
  /** The project directory: `--project`, else the agent's (`$CLAUDE_PROJECT_DIR`, `$GEMINI_PROJECT_DIR`), else the event's `cwd`. */
  project: string | undefined;
  lockWaitMs: number;
}

type ShellEvent = Extract<HookEvent, { kind: 'shell-before' | 'shell-after' }>;

/** Does what one hook event asks, in a session opened for this call only. Failures throw; the caller answers them in the agent's protocol. */
export async function runHook(event: Exclude<HookEvent, { kind: 'ignored' }>, options: RunHookOptions): Promise<HookAnswer> {
  const project = options.project ?? event.cwd;
  const opened = await openHookSession({ project, storeDir: options.storeDir, sessionId: rewindableSessionIdOf(event.sessionId), lockWaitMs: options.lockWaitMs });
  try {
    if (event.kind === 'prompt') await checkpointPrompt(opened, event.prompt, event.promptId);
    else if (event.kind === 'edit') await backUpFiles(opened, event);
    else await scanAroundShell(opened, event, options.storeDir);
  } finally {
    await opened.close();
  }
  return proceed;
}

/**
 * The checkpoint of a prompt, keyed by the agent's prompt id when it gives a
 * fresh UUID (Claude Code's `prompt_id`), else by a new one, with the
 * prompt's text as the user message, so `rewindable checkpoints` shows it.
 * Once the session has scanned the project for a shell command, every
 * prompt's checkpoint scans it too (the capture scope's rule: what appeared
 * between two prompts belongs to the turn before).
 */
async function checkpointPrompt(opened: HookSession, prompt: string, promptId: string | undefined): Promise<void> {
  const { session } = opened;
  const { state } = session;
  const fresh = promptId !== undefined && isUuidText(promptId) && (!state.checkpointsById.has(promptId.toLowerCase()) || state.latestCheckpoint?.id === promptId.toLowerCase());
  const id = fresh ? promptId.toLowerCase() : randomUUID();
  const message = { role: 'user', content: prompt };
  if (state.lastScanStartedAtNs === undefined) {
    await recordUserMessage(session, message, { uuid: id });
    return;
  }
  // The scan first: it decides which turn a file that appeared belongs to, by the checkpoints before this one.
  await checkpointWithScan(session, id, captureScope(opened));
  await recordMessage(session, { type: 'user', uuid: id, message });
}

/** First backups of the files a file tool is about to change; a path that cannot be backed up throws, and the call is blocked. */
async function backUpFiles({ session, scope }: HookSession, event: Extract<HookEvent, { kind: 'edit' }>): Promise<void> {
  await ensureCheckpoint(session);
  for (const given of event.paths) {
    const absolute = canonicalPath(path.resolve(event.cwd, given), scope);
    await trackFirstBackup(session, absolute, given);
  }
}

/**
 * Before a shell command: a scan of the project, which backs up every file
 * the session does not know yet (the first scan: all of them), so whatever
 * the command removes or rewrites can be restored. After it: a scan that
 * backs up what the command created as "absent" (a rewind deletes it), and
 * the command's record, compared with the scan before when that hook ran.
 */
async function scanAroundShell(opened: HookSession, event: ShellEvent, storeDir: string): Promise<void> {
  const { session } = opened;
  await ensureCheckpoint(session);
  const capture = captureScope(opened);
  const scans = new ShellScanState(storeDir, session.root, session.sessionId);
  if (event.kind === 'shell-before') {
    const snapshot = await snapshotScope(session, capture);
    if (event.toolUseId !== undefined) scans.save(event.toolUseId, snapshot);
    return;
  }
  const before = event.toolUseId !== undefined ? scans.take(event.toolUseId) : undefined;
  if (before === undefined) {
    // No scan before it to compare with: the scan still backs up what appeared since the last recorded one, the record lists nothing.
    await snapshotScope(session, capture);
    return;
  }
  // What the process of the before-hook knew: its scan is the one a file the command created is new since.
  const known = session.state.lastScanStartedAtNs;
  if (known === undefined || before.startedAtNs > known) session.state.noteScan(before.startedAtNs, { scanRules: before.rules, scanLeftOut: before.leftOut });
  await recordCommandChanges(session, capture, { ...before, overCap: [], unreadable: [] }, event.command);
  scans.remove(event.toolUseId!);
}

/** Hooks installed in the middle of a conversation see a tool call before any prompt: its checkpoint is taken then, without a prompt. */
async function ensureCheckpoint(session: Session): Promise<void> {
  if (session.state.latestCheckpoint !== undefined) return;
  const checkpoint = await session.prepareCheckpoint(randomUUID());
  await session.append(checkpoint.records, checkpoint.blobs);
}

/** The project, minus `.git`, `node_modules`, the store and what `.gitignore` leaves out. */
function captureScope({ session, scope }: HookSession): ResolvedCapture {
  return resolveCapture(true, session.root, scope.storeDirectory)!;
}
