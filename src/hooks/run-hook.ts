import { rewindableSessionIdOf } from './agent-session-id.js';
import { proceed, type HookAnswer } from './hook-answer.js';
import type { HookEvent } from './hook-event.js';
import { openHookSession, type HookSession } from './hook-session.js';

export interface RunHookOptions {
  storeDir: string;
  /** The project directory: `--project`, else the agent's (`$CLAUDE_PROJECT_DIR`, `$GEMINI_PROJECT_DIR`), else the event's `cwd`. */
  project: string | undefined;
  /** Directories outside the project whose files may be backed up too. */
  extraRoots: string[];
  lockWaitMs: number;
}

export type HandledEvent = Exclude<HookEvent, { kind: 'ignored' }>;

/**
 * Does what one hook event asks, in a session opened for this call only.
 * Each kind of event loads only its own modules (a hook is a new process
 * every time). Failures throw; the caller answers them in the agent's protocol.
 */
export async function runHook(event: HandledEvent, options: RunHookOptions): Promise<HookAnswer> {
  const project = options.project ?? event.cwd;
  const opened = await openHookSession({ project, storeDir: options.storeDir, sessionId: rewindableSessionIdOf(event.sessionId), extraRoots: options.extraRoots, lockWaitMs: options.lockWaitMs });
  try {
    await handleEvent(opened, event, options.storeDir);
  } finally {
    await opened.close();
  }
  return proceed;
}

/** The event's work in an open session whose lock is held: everything it records is durable when this returns. */
export async function handleEvent(opened: HookSession, event: HandledEvent, storeDir: string): Promise<void> {
  if (event.kind === 'prompt') await (await import('./prompt-hook.js')).checkpointPrompt(opened, event.prompt, event.promptId);
  else if (event.kind === 'edit') await (await import('./edit-hook.js')).backUpFiles(opened, event);
  else await (await import('./shell-hook.js')).scanAroundShell(opened, event, storeDir);
}
