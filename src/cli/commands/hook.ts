import path from 'node:path';
import { answerHookText } from '../../hooks/answer-hook.js';
import type { HookAnswer } from '../../hooks/hook-answer.js';
import { stringValue, stringValues, type Command, type Invocation } from '../command.js';
import { UsageError, type ExitCode } from '../exit-codes.js';

/** Parallel hooks of one agent wait this long for each other (and for a rewind) before a call fails. */
export const defaultLockWaitSeconds = 20;

export const hookCommand: Command = {
  name: 'hook',
  description:
    'Handles one hook event of a CLI agent, read as JSON from stdin (Claude Code\'s hook input; Gemini CLI\'s has the same fields): ' +
    'UserPromptSubmit takes a checkpoint with the prompt as its text; PreToolUse of Write, Edit, MultiEdit or NotebookEdit backs up ' +
    'the files the tool is about to change; PreToolUse, PostToolUse and PostToolUseFailure of Bash scan the project, so a rewind undoes ' +
    'what the command changed. Other events are left alone. The session is the agent\'s session id (see docs/hooks.md), in the project of --project, ' +
    'else $CLAUDE_PROJECT_DIR, else the event\'s cwd; it is created on first use. A failure before a tool runs blocks the call ' +
    '(exit code 2, the reason on stderr); at a prompt or after a tool it is shown as a systemMessage. Install it with ' +
    '"rewindable hooks install claude-code".',
  positionals: { required: [] },
  options: {
    project: { type: 'string', value: 'DIR', description: 'The project directory (default: $CLAUDE_PROJECT_DIR, else $GEMINI_PROJECT_DIR, else the event\'s cwd).' },
    'extra-root': {
      type: 'string',
      value: 'DIR',
      multiple: true,
      description: 'A directory outside the project whose files may be backed up too (Claude Code\'s additional directories); repeatable. A file tool on any other file outside the project is blocked.',
    },
    'lock-wait': { type: 'string', value: 'SECONDS', description: `How long to wait while another process holds the session (default: ${defaultLockWaitSeconds}).` },
  },
  examples: ["echo '{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"…\",\"cwd\":\"/home/me/app\",\"prompt\":\"Add a test\"}' | rewindable hook"],
  async run(invocation) {
    const lockWaitMs = lockWaitOf(invocation);
    if (invocation.terminal.stdin.isTTY === true) throw new UsageError('rewindable hook reads one hook event as JSON from stdin; the agent pipes it in.', 'hook');
    const text = await readAll(invocation.terminal.stdin);
    return answer(invocation, await handle(invocation, text, lockWaitMs));
  },
};

async function handle(invocation: Invocation, text: string, lockWaitMs: number): Promise<HookAnswer> {
  const extraRoots = stringValues(invocation, 'extra-root').map((directory) => path.resolve(invocation.terminal.cwd, directory));
  return await answerHookText(text, { storeDir: invocation.storeDir, project: projectOf(invocation), extraRoots, lockWaitMs });
}

function projectOf(invocation: Invocation): string | undefined {
  const given = stringValue(invocation, 'project') ?? nonEmpty(invocation.terminal.env.CLAUDE_PROJECT_DIR) ?? nonEmpty(invocation.terminal.env.GEMINI_PROJECT_DIR);
  return given !== undefined ? path.resolve(invocation.terminal.cwd, given) : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}

function answer(invocation: Invocation, result: HookAnswer): ExitCode {
  if (result.stdout !== undefined) invocation.terminal.stdout.write(result.stdout);
  if (result.stderr !== undefined) invocation.terminal.stderr.write(result.stderr);
  return result.exitCode;
}

function lockWaitOf(invocation: Invocation): number {
  const given = stringValue(invocation, 'lock-wait');
  if (given === undefined) return defaultLockWaitSeconds * 1000;
  const seconds = Number(given);
  if (given.trim() === '' || !Number.isFinite(seconds) || seconds < 0) throw new UsageError(`--lock-wait takes a number of seconds, 0 or more; got ${JSON.stringify(given)}.`, 'hook');
  return seconds * 1000;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
