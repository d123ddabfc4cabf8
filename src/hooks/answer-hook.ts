import { failureAnswer, type HookAnswer } from './hook-answer.js';
import { eventNameOf, HookInputError, parseHookEvent, phaseOf, type HookPhase } from './hook-event.js';
import type { HandledEvent, RunHookOptions } from './run-hook.js';

/** Does one event's work and answers proceed, or throws: in this process (`runHook`) or in a resident server. */
export type HookRunner = (event: HandledEvent, options: RunHookOptions) => Promise<HookAnswer>;

/**
 * The answer to one hook input, in the agent's hook protocol: an event the
 * hooks leave alone is answered at once; any failure becomes the answer its
 * phase calls for. Loads nothing but the event parser until there is work.
 */
export async function answerHookText(text: string, options: RunHookOptions, run?: HookRunner): Promise<HookAnswer> {
  let phase: HookPhase = phaseOf(eventNameOf(text));
  try {
    const event = parseHookEvent(text);
    if (event.kind === 'ignored') return { exitCode: 0 };
    phase = event.kind === 'prompt' ? 'prompt' : event.kind === 'shell-after' ? 'after-tool' : 'before-tool';
    // Loaded only for an event with work to do: the store, the session and the capture scan.
    const runner = run ?? (await import('./run-hook.js')).runHook;
    return await runner(event, options);
  } catch (error) {
    return failureAnswer(phase, failureMessage(phase, text, error));
  }
}

/** What went wrong, said to whoever reads it: the model (a blocked call) or the user (a warning). */
function failureMessage(phase: HookPhase, text: string, error: unknown): string {
  const reason = error instanceof HookInputError ? error.message : error instanceof Error ? error.message : String(error);
  if (phase === 'before-tool') {
    const tool = toolNameOf(text);
    return `rewindable could not back up the files before this ${tool ?? 'tool'} call, so the call was blocked: ${reason}`;
  }
  if (phase === 'prompt') return `rewindable took no checkpoint for this prompt, so a rewind cannot go back to just before it: ${reason}`;
  if (phase === 'after-tool') return `rewindable could not record what this ${toolNameOf(text) ?? 'tool'} call changed; files it created may survive a rewind: ${reason}`;
  return `rewindable hook: ${reason}`;
}

function toolNameOf(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as { tool_name?: unknown };
    return typeof value.tool_name === 'string' ? value.tool_name : undefined;
  } catch {
    return undefined;
  }
}
