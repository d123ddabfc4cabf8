import { randomUUID } from 'node:crypto';
import { recordUserMessage } from '../conversation/conversation.js';
import { isUuidText } from './agent-session-id.js';
import type { HookSession } from './hook-session.js';

/**
 * The checkpoint of a prompt, keyed by the agent's prompt id when it gives a
 * UUID it has not used before (Claude Code's `prompt_id`), else by a new one, with the
 * prompt's text as the user message, so `rewindable checkpoints` shows it.
 * Once the session has scanned the project for a shell command, every
 * prompt's checkpoint scans it too (the capture scope's rule: what appeared
 * between two prompts belongs to the turn before).
 */
export async function checkpointPrompt(opened: HookSession, prompt: string, promptId: string | undefined): Promise<void> {
  const { session } = opened;
  const { state } = session;
  const given = promptId?.toLowerCase();
  // A prompt id seen before (an event delivered twice) gets a new checkpoint rather than a message conflict.
  const fresh = given !== undefined && isUuidText(given) && !state.checkpointsById.has(given);
  const id = fresh ? given : randomUUID();
  const message = { role: 'user', content: prompt };
  if (state.lastScanStartedAtNs === undefined) {
    await recordUserMessage(session, message, { uuid: id });
    return;
  }
  const [{ checkpointWithScan }, { checkpointWithJournal }, { recordMessage }, { captureScope }] = await Promise.all([
    import('../capture/capture-scan.js'),
    import('../capture/journal/journal-scan.js'),
    import('../conversation/conversation.js'),
    import('./capture-scope.js'),
  ]);
  // The scan first: it decides which turn a file that appeared belongs to, by the checkpoints before this one.
  if (opened.journal === undefined) await checkpointWithScan(session, id, captureScope(opened));
  else await checkpointWithJournal(session, id, captureScope(opened), opened.journal);
  await recordMessage(session, { type: 'user', uuid: id, message });
}
