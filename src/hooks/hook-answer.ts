import type { HookPhase } from './hook-event.js';

/** What a hook process answers the agent: its exit code, and what it prints. */
export interface HookAnswer {
  /** 0: go on (stdout, if any, is the agent's JSON); 1: a non-blocking error; 2: block the call (stderr is the reason). */
  exitCode: 0 | 1 | 2;
  stdout?: string;
  stderr?: string;
}

/** Nothing to say: the agent goes on. Nothing on stdout either, where a prompt hook's output would become context. */
export const proceed: HookAnswer = { exitCode: 0 };

/**
 * A failure, in the hook protocol of Claude Code (and Gemini CLI, which
 * shares it): before a tool runs, exit code 2 with the reason on stderr
 * blocks the call and shows the reason to the model, the one answer that
 * blocks even when stdout cannot be parsed; at a prompt or after a tool,
 * where blocking would not save anything, exit 0 with a `systemMessage` the
 * user sees. Never exit 0 with nothing said.
 */
export function failureAnswer(phase: HookPhase, message: string): HookAnswer {
  if (phase === 'before-tool') return { exitCode: 2, stderr: `${message}\n` };
  if (phase === 'prompt' || phase === 'after-tool') return { exitCode: 0, stdout: `${JSON.stringify({ systemMessage: message })}\n`, stderr: `${message}\n` };
  return { exitCode: 1, stderr: `${message}\n` };
}
