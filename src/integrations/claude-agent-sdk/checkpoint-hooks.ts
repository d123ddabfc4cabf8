import { randomUUID } from 'node:crypto';
import type { HookCallback, HookJSONOutput, Options, PostToolUseHookInput, PreToolUseHookInput, SDKUserMessage, UserPromptSubmitHookInput } from '@anthropic-ai/claude-agent-sdk';
import type { FileEditInput, FileWriteInput, NotebookEditInput } from '@anthropic-ai/claude-agent-sdk/sdk-tools';
import type { CheckpointManager } from '../../checkpoint-manager.js';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { isUuid } from '../../paths.js';
import { recordCall } from '../../tools/record-call.js';
import { writeNotRecorded, type WriteNotRecordedWarning } from '../../tools/tool-warnings.js';
import type { PathSelector } from '../../tools/wrap.js';
import { refusalReason, selectPaths, type LoosePathSelector } from '../tracked-call.js';
import { checkpointUserMessage } from '../user-message.js';
import { mergeHooks, type HookMap } from './merge-hooks.js';
import { PromptIds } from './prompt-ids.js';

/** Claude Code's built-in file tools and the input fields naming the files they write. */
const builtInTools = {
  Write: ['file_path'] satisfies PathSelector<FileWriteInput>,
  Edit: ['file_path'] satisfies PathSelector<FileEditInput>,
  NotebookEdit: ['notebook_path'] satisfies PathSelector<NotebookEditInput>,
};

export interface CheckpointHooksOptions {
  /**
   * Track the file tools of subagents too (hook inputs that carry an
   * `agent_id`). Their writes belong to the user turn that started them.
   * @default true
   */
  trackSubagents?: boolean;
  /**
   * More tools that write files, by the name the hooks see (an MCP tool is
   * `mcp__<server>__<tool>`): the input fields holding paths, or a function
   * of the input. Write, Edit and NotebookEdit are always tracked.
   * @default {}
   */
  tools?: Record<string, readonly string[] | ((input: Record<string, unknown>) => string | readonly string[] | undefined)>;
  /**
   * A write outside the project (and its `extraRoots`) cannot be tracked:
   * `'deny'` refuses the tool call, `'allow'` lets it run untracked (for
   * example plan files Claude Code keeps in its config directory).
   * @default 'deny'
   */
  outsideProject?: 'deny' | 'allow';
  /** Called when a user prompt's checkpoint has been taken. */
  onCheckpoint?: (event: CheckpointEvent) => void;
  /**
   * Called when a prompt's checkpoint could not be keyed as expected, or
   * when a tool wrote but the record of its write could not be stored (the
   * same text is also shown to the user, as the hook's `systemMessage`).
   */
  onWarning?: (warning: CheckpointWarning) => void;
}

/** What `onWarning` is told, by its `code`. */
export type CheckpointWarning = PromptNotMatchedWarning | WriteNotRecordedWarning;

/** A prompt that matched none of the messages streamed through `prompt()`. */
export interface PromptNotMatchedWarning {
  code: 'prompt-not-matched';
  /** What happened and what it means for `rewindFiles()`. */
  message: string;
  /** The checkpoint the prompt got instead. */
  checkpointId: string;
  /** UUIDs of messages passed through `prompt()` that this prompt used up: none of them has a checkpoint. */
  messageIds: string[];
  /** The Claude Code session. */
  sessionId: string;
}

export interface CheckpointEvent {
  /** The checkpoint's id: pass it to `rewindFiles()`. */
  checkpointId: string;
  /**
   * Where the id comes from: `message`, the UUID of the `SDKUserMessage`
   * passed through `prompt()`; `prompt-id`, the `prompt_id` the CLI gave the
   * prompt (its transcript stores it as the user message's `promptId`);
   * `generated`, a new UUID.
   */
  source: 'message' | 'prompt-id' | 'generated';
  /** The prompt's text, as the UserPromptSubmit hook received it. */
  prompt: string;
  /** The Claude Code session. */
  sessionId: string;
}

export interface CheckpointHooks {
  /**
   * The hooks: UserPromptSubmit takes the checkpoint of each user prompt;
   * PreToolUse backs up the files of Write, Edit and NotebookEdit (and
   * `tools`) before they run, and denies the call when it cannot; PostToolUse
   * records what they wrote, with the tool use id.
   */
  hooks: HookMap;
  /** `queryOptions` with the hooks added to its own `hooks` (which are all kept). */
  options<QueryOptions extends Options>(queryOptions?: QueryOptions): QueryOptions & { hooks: HookMap };
  /**
   * Passes a streamed prompt through to `query()`, so each user message's
   * checkpoint is keyed by the message's `uuid` (one is added where it is
   * missing): the id the SDK's own `rewindFiles()` and the CLI's transcript
   * use. Without it, checkpoints are keyed by the prompt's `prompt_id`.
   */
  prompt(messages: AsyncIterable<SDKUserMessage>): AsyncIterable<SDKUserMessage>;
}

/**
 * Checkpoint hooks for the Claude Agent SDK: every user prompt gets a
 * checkpoint, and every file Claude's Write, Edit and NotebookEdit tools
 * change (the main agent's and its subagents') is backed up first, so
 * `manager.rewindFiles(checkpointId)` can put the files back as they were
 * before any prompt. A file that cannot be backed up is never written: the
 * tool call is denied and Claude is told why.
 *
 * @example
 * const checkpoints = createCheckpointHooks(manager);
 * for await (const message of query({ prompt: checkpoints.prompt(userMessages), options: checkpoints.options({ cwd, hooks: myHooks }) })) {
 *   // ...
 * }
 * await manager.rewindFiles(firstUserMessage.uuid);
 */
export function createCheckpointHooks(manager: CheckpointManager, options: CheckpointHooksOptions = {}): CheckpointHooks {
  const trackSubagents = options.trackSubagents ?? true;
  const allowOutside = (options.outsideProject ?? 'deny') === 'allow';
  const tools = new Map<string, LoosePathSelector>(Object.entries({ ...builtInTools, ...options.tools }) as Array<[string, LoosePathSelector]>);
  const promptIds = new PromptIds();

  const userPromptSubmit: HookCallback = async (input) => {
    if (input.hook_event_name !== 'UserPromptSubmit' || input.agent_id !== undefined || isMachinePrompt(input, promptIds)) return {};
    const { checkpointId, source, warning } = checkpointIdOf(input, promptIds);
    try {
      await checkpointUserMessage(manager, { role: 'user', content: input.prompt }, { id: checkpointId });
    } catch (error) {
      return { decision: 'block', reason: `rewindable could not take the checkpoint of this prompt, so it was not run: ${messageOf(error)}` };
    }
    options.onCheckpoint?.({ checkpointId, source, prompt: input.prompt, sessionId: input.session_id });
    if (warning === undefined) return {};
    options.onWarning?.({ ...warning, checkpointId, sessionId: input.session_id });
    return { systemMessage: warning.message };
  };

  const preToolUse: HookCallback = async (input) => {
    if (input.hook_event_name !== 'PreToolUse' || !isTracked(input)) return {};
    let paths: string[] = [];
    try {
      paths = selectPaths(tools.get(input.tool_name), input.tool_input);
      for (const file of paths) {
        const canonical = resolveTrackable(manager, file, allowOutside);
        if (canonical !== undefined) await manager.trackEdit(canonical);
      }
    } catch (error) {
      return deny(refusalReason({ tool: input.tool_name, paths }, error));
    }
    return {};
  };

  const postToolUse: HookCallback = async (input) => {
    if (input.hook_event_name !== 'PostToolUse' || !isTracked(input)) return {};
    // The tool has run and Claude has its result; a write that cannot be recorded is the harness's and the user's to know.
    const call = { tool: input.tool_name, toolCallId: input.tool_use_id };
    let warning: WriteNotRecordedWarning | undefined;
    const warn = (notRecorded: WriteNotRecordedWarning) => (warning = notRecorded);
    let paths: string[] = [];
    try {
      paths = selectPaths(tools.get(input.tool_name), input.tool_input);
      const files = paths.flatMap((file) => resolveTrackable(manager, file, allowOutside) ?? []);
      await recordCall(manager, call, files, warn);
    } catch (error) {
      warn(writeNotRecorded(call, paths, error));
    }
    if (warning === undefined) return {};
    options.onWarning?.(warning);
    return { systemMessage: warning.message };
  };

  function isTracked(input: PreToolUseHookInput | PostToolUseHookInput): boolean {
    return tools.has(input.tool_name) && (trackSubagents || input.agent_id === undefined);
  }

  const matcher = [...tools.keys()].join('|');
  const hooks: HookMap = {
    UserPromptSubmit: [{ hooks: [userPromptSubmit] }],
    // 'block': a hook that fails in a way it did not foresee (a throw) must stop the write, not let it through untracked.
    PreToolUse: [{ matcher, hooks: [preToolUse], onFailure: 'block' }],
    PostToolUse: [{ matcher, hooks: [postToolUse] }],
  };
  return {
    hooks,
    options: <QueryOptions extends Options>(queryOptions?: QueryOptions) =>
      ({ ...queryOptions, hooks: mergeHooks(queryOptions?.hooks, hooks) }) as QueryOptions & { hooks: HookMap },
    prompt: (messages) => promptIds.pass(messages),
  };
}

/**
 * `query()` options with checkpoint hooks added: the one line most harnesses
 * need. Use `createCheckpointHooks` to stream prompts with their UUIDs.
 *
 * @example
 * for await (const message of query({ prompt: 'Fix the failing test', options: withCheckpoints(manager, { cwd, permissionMode: 'acceptEdits' }) })) {
 *   // ...
 * }
 */
export function withCheckpoints<QueryOptions extends Options>(manager: CheckpointManager, queryOptions?: QueryOptions, options?: CheckpointHooksOptions): QueryOptions & { hooks: HookMap } {
  return createCheckpointHooks(manager, options).options(queryOptions);
}

/**
 * A prompt the CLI makes itself: a background task's `<task-notification>`
 * (Claude Code runs subagents in the background by default), and the other
 * turns its `source` calls `system`. Claude Code takes no checkpoint for
 * them, and neither do these hooks: the files changed then belong to the
 * user message whose turn it is. A CLI that sends no `source` is known by
 * the notification's opening tag, which a user may paste too: a prompt that
 * is the text of a message streamed through `prompt()` is the user's.
 */
function isMachinePrompt(input: UserPromptSubmitHookInput, promptIds: PromptIds): boolean {
  if (input.source !== undefined) return input.source === 'system';
  return input.prompt.trimStart().startsWith('<task-notification>') && !promptIds.matches(input.prompt);
}

interface PromptCheckpointId extends Pick<CheckpointEvent, 'checkpointId' | 'source'> {
  warning?: Pick<PromptNotMatchedWarning, 'code' | 'message' | 'messageIds'>;
}

function checkpointIdOf(input: UserPromptSubmitHookInput, promptIds: PromptIds): PromptCheckpointId {
  const match = promptIds.take(input.prompt);
  if (match.uuid !== undefined) return { checkpointId: match.uuid.toLowerCase(), source: 'message' };
  const fallback: PromptCheckpointId = isUuid(input.prompt_id) ? { checkpointId: input.prompt_id.toLowerCase(), source: 'prompt-id' } : { checkpointId: randomUUID(), source: 'generated' };
  if (match.waiting === 0) return fallback; // a plain string prompt, or a prompt of the CLI's own
  const used = match.usedUp.length > 0 ? ` It used up the message${match.usedUp.length > 1 ? 's' : ''} ${match.usedUp.join(', ')}, which get no checkpoint.` : '';
  const message =
    `rewindable could not match this prompt to any of the ${match.waiting} user message${match.waiting > 1 ? 's' : ''} streamed to query() that had not started a turn yet, ` +
    `so its checkpoint is ${fallback.checkpointId} (${fallback.source === 'prompt-id' ? "the prompt's prompt_id" : 'a new UUID'}) instead of a message's uuid.${used}`;
  return { ...fallback, warning: { code: 'prompt-not-matched', message, messageIds: match.usedUp } };
}

/** The canonical path to track, or undefined for a path outside the project that may be written untracked. */
function resolveTrackable(manager: CheckpointManager, file: string, allowOutside: boolean): string | undefined {
  try {
    return manager.resolvePath(file);
  } catch (error) {
    if (allowOutside && RewindableError.isInstance(error) && error.code === RewindableErrorCode.PATH_OUTSIDE_PROJECT) return undefined;
    throw error;
  }
}

function deny(reason: string): HookJSONOutput {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
