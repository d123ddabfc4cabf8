/**
 * One hook event as a CLI agent sends it on stdin: Claude Code's hook input
 * (`session_id`, `cwd`, `hook_event_name`, `prompt`, `tool_name`,
 * `tool_input`, `tool_use_id` ...), read without zod so that an event the
 * hooks leave alone costs nothing but Node's start-up.
 */
export type HookEvent =
  | { kind: 'prompt'; sessionId: string; cwd: string; prompt: string; promptId: string | undefined }
  | { kind: 'edit'; sessionId: string; cwd: string; tool: string; toolUseId: string | undefined; paths: string[] }
  | { kind: 'shell-before' | 'shell-after'; sessionId: string; cwd: string; tool: string; toolUseId: string | undefined; command: string | undefined }
  | { kind: 'ignored'; eventName: string; tool: string | undefined };

/** What a hook event's name means to the hooks: which answer the agent expects on failure. */
export type HookPhase = 'prompt' | 'before-tool' | 'after-tool' | 'other';

/** A hook input that is not the JSON object the agent's hook protocol describes. */
export class HookInputError extends Error {
  override readonly name = 'HookInputError';
}

/**
 * The tools that write files, each with the fields of its input that name
 * them: Claude Code's, and Gemini CLI's `write_file` and `replace`.
 */
export const fileTools: Readonly<Record<string, readonly string[]>> = {
  Write: ['file_path'],
  Edit: ['file_path'],
  MultiEdit: ['file_path'],
  NotebookEdit: ['notebook_path'],
  write_file: ['file_path'],
  replace: ['file_path'],
};

/** The shell tools (Claude Code's, Gemini CLI's): their changes are found by a scan of the project before and after. */
export const shellTools: readonly string[] = ['Bash', 'run_shell_command'];

const beforeToolEvents = new Set(['PreToolUse', 'BeforeTool']);
const afterToolEvents = new Set(['PostToolUse', 'PostToolUseFailure', 'AfterTool']);

export function phaseOf(eventName: string | undefined): HookPhase {
  if (eventName === 'UserPromptSubmit' || eventName === 'BeforeAgent') return 'prompt';
  if (eventName !== undefined && beforeToolEvents.has(eventName)) return 'before-tool';
  if (eventName !== undefined && afterToolEvents.has(eventName)) return 'after-tool';
  return 'other';
}

/** The event's name as far as the input can be read at all, for an answer in the right protocol when the rest is malformed. */
export function eventNameOf(text: string): string | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return isObject(value) && typeof value.hook_event_name === 'string' ? value.hook_event_name : undefined;
  } catch {
    return undefined;
  }
}

export function parseHookEvent(text: string): HookEvent {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HookInputError(`the hook input on stdin is not JSON (${(error as Error).message}); the agent sends one JSON object per hook call`);
  }
  if (!isObject(value)) throw new HookInputError('the hook input on stdin is not a JSON object');
  const eventName = requiredString(value, 'hook_event_name');
  const phase = phaseOf(eventName);
  const tool = typeof value.tool_name === 'string' ? value.tool_name : undefined;
  if (phase === 'other') return { kind: 'ignored', eventName, tool };
  const sessionId = requiredString(value, 'session_id');
  const cwd = requiredString(value, 'cwd');
  if (phase === 'prompt') {
    // A turn the agent injects itself (a background task's notification, an auto-continuation) is part of the
    // turn in progress, not a new prompt to rewind to: as the library's Claude Agent SDK integration does by default.
    if (value.source === 'system' || value.source === 'poll_event') return { kind: 'ignored', eventName, tool };
    const prompt = typeof value.prompt === 'string' ? value.prompt : '';
    return { kind: 'prompt', sessionId, cwd, prompt, promptId: typeof value.prompt_id === 'string' ? value.prompt_id : undefined };
  }
  if (tool === undefined) throw new HookInputError(`${eventName} input has no "tool_name" string`);
  const toolUseId = typeof value.tool_use_id === 'string' ? value.tool_use_id : undefined;
  const input = isObject(value.tool_input) ? value.tool_input : {};
  const pathFields = fileTools[tool];
  if (pathFields !== undefined) {
    // Only before the tool runs: what it is about to change is backed up then; after it, there is nothing left to save.
    if (phase !== 'before-tool') return { kind: 'ignored', eventName, tool };
    const paths = pathFields.map((field) => input[field]).filter((given): given is string => typeof given === 'string');
    if (paths.length === 0) throw new HookInputError(`${tool} input has no ${pathFields.map((field) => `"${field}"`).join(' or ')} string: nothing to back up`);
    return { kind: 'edit', sessionId, cwd, tool, toolUseId, paths };
  }
  if (shellTools.includes(tool)) {
    const command = typeof input.command === 'string' ? input.command : undefined;
    return { kind: phase === 'before-tool' ? 'shell-before' : 'shell-after', sessionId, cwd, tool, toolUseId, command };
  }
  return { kind: 'ignored', eventName, tool };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function requiredString(value: Record<string, unknown>, field: string): string {
  const found = value[field];
  if (typeof found !== 'string' || found === '') throw new HookInputError(`the hook input has no "${field}" string`);
  return found;
}
