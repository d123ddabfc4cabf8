import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { runCli, type BuiltCli, type CliRun } from '../../cli/helpers/built-cli.js';

/** The fields every Claude Code hook input carries. */
export interface AgentSession {
  sessionId: string;
  cwd: string;
}

export function agentSession(cwd: string): AgentSession {
  return { sessionId: randomUUID(), cwd };
}

/** Claude Code's hook inputs, as its hooks receive them on stdin (see the Agent SDK's `HookInput` types). */
export const events = {
  prompt: (session: AgentSession, prompt: string, more: Record<string, unknown> = {}) => ({
    session_id: session.sessionId,
    transcript_path: `/tmp/${session.sessionId}.jsonl`,
    cwd: session.cwd,
    permission_mode: 'default',
    hook_event_name: 'UserPromptSubmit',
    prompt,
    ...more,
  }),
  preTool: (session: AgentSession, toolName: string, toolInput: Record<string, unknown>, toolUseId = `toolu_${randomUUID().slice(0, 8)}`) => ({
    session_id: session.sessionId,
    transcript_path: `/tmp/${session.sessionId}.jsonl`,
    cwd: session.cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: toolUseId,
  }),
  postTool: (session: AgentSession, toolName: string, toolInput: Record<string, unknown>, toolUseId: string) => ({
    session_id: session.sessionId,
    transcript_path: `/tmp/${session.sessionId}.jsonl`,
    cwd: session.cwd,
    permission_mode: 'default',
    hook_event_name: 'PostToolUse',
    tool_name: toolName,
    tool_input: toolInput,
    tool_response: { stdout: '', stderr: '', interrupted: false },
    tool_use_id: toolUseId,
  }),
};

/**
 * The environment of hooks run by a test: their resident servers' sockets
 * under the test binary's own directory (never the user's), and servers that
 * exit soon after the test's last event.
 */
export function hookEnvironment(cli: BuiltCli, store: string, more: Record<string, string> = {}): Record<string, string> {
  const runtime = path.join(cli.home, 'run');
  fs.mkdirSync(runtime, { recursive: true, mode: 0o700 });
  return { REWINDABLE_HOME: store, XDG_RUNTIME_DIR: runtime, REWINDABLE_HOOK_SERVER_IDLE: '20', ...more };
}

/** `rewindable hook` in a child process, the event as JSON on stdin, the store in `store`. */
export function runHook(cli: BuiltCli, store: string, event: object | string, args: string[] = [], env: Record<string, string> = {}): Promise<CliRun> {
  return runCli(cli, ['hook', ...args], { input: typeof event === 'string' ? event : JSON.stringify(event), env: hookEnvironment(cli, store, env) });
}

/** Runs a shell command in the project, as the Bash tool does. */
export function shell(cwd: string, command: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', resolve);
  });
}

/** `rewindable <args>` with the store in `store`, from `cwd`. */
export function rewindable(cli: BuiltCli, store: string, args: string[], cwd = os.tmpdir()): Promise<CliRun> {
  return runCli(cli, args, { cwd, env: { REWINDABLE_HOME: store } });
}
