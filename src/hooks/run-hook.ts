import { rewindableSessionIdOf } from './agent-session-id.js';
import { proceed, type HookAnswer } from './hook-answer.js';
import type { HookEvent } from './hook-event.js';
import { openHookSession } from './hook-session.js';

export interface RunHookOptions {
  storeDir: string;
  /** The project directory: `--project`, else the agent's (`$CLAUDE_PROJECT_DIR`, `$GEMINI_PROJECT_DIR`), else the event's `cwd`. */
  project: string | undefined;
  /** Directories outside the project whose files may be backed up too. */
  extraRoots: string[];
  lockWaitMs: number;
}

/**
 * Does what one hook event asks, in a session opened for this call only.
 * Each kind of event loads only its own modules (a hook is a new process
 * every time). Failures throw; the caller answers them in the agent's protocol.
 */
export async function runHook(event: Exclude<HookEvent, { kind: 'ignored' }>, options: RunHookOptions): Promise<HookAnswer> {
  const project = options.project ?? event.cwd;
  const opened = await openHookSession({ project, storeDir: options.storeDir, sessionId: rewindableSessionIdOf(event.sessionId), extraRoots: options.extraRoots, lockWaitMs: options.lockWaitMs });
  try {
    if (event.kind === 'prompt') await (await import('./prompt-hook.js')).checkpointPrompt(opened, event.prompt, event.promptId);
    else if (event.kind === 'edit') await (await import('./edit-hook.js')).backUpFiles(opened, event);
    else await (await import('./shell-hook.js')).scanAroundShell(opened, event, options.storeDir);
  } finally {
    await opened.close();
  }
  return proceed;
}
