import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { tempProject } from '../helpers/temp-project.js';
import { agentSession, events, rewindable, runHook, shell } from './helpers/hook-runner.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli?.remove());

interface ListedCheckpoint {
  id: string;
  prompt?: string;
  files: string[];
}

async function checkpointsOf(store: string, sessionId: string): Promise<ListedCheckpoint[]> {
  const listed = await rewindable(cli, store, ['checkpoints', sessionId, '--json']);
  expect(listed.stderr).toBe('');
  return (JSON.parse(listed.stdout) as { checkpoints: ListedCheckpoint[] }).checkpoints;
}

describe('rewindable hook: Claude Code hook events on stdin', () => {
  it('UserPromptSubmit takes a checkpoint in the session of the agent\'s id, listed with the prompt, keyed by prompt_id', async () => {
    const project = tempProject();
    const agent = agentSession(project.root);
    const promptId = '7d0c2a8e-6a1b-4c4e-9f3e-2b7d5c1a9e41';
    const first = await runHook(cli, project.store, events.prompt(agent, 'Rename greet to welcome\nand update the tests', { prompt_id: promptId }));
    expect(first).toEqual({ code: 0, stdout: '', stderr: '' });
    await runHook(cli, project.store, events.prompt(agent, 'Now the docs'));
    // A turn Claude Code injects itself (a background task's notification) is no prompt to go back to.
    expect(await runHook(cli, project.store, events.prompt(agent, '<task-notification>done</task-notification>', { source: 'system' }))).toEqual({ code: 0, stdout: '', stderr: '' });
    // A prompt id seen before gets a checkpoint of its own.
    expect(await runHook(cli, project.store, events.prompt(agent, 'Once more', { prompt_id: promptId }))).toEqual({ code: 0, stdout: '', stderr: '' });
    const checkpoints = await checkpointsOf(project.store, agent.sessionId);
    expect(checkpoints.map((checkpoint) => checkpoint.prompt)).toEqual(['Rename greet to welcome', 'Now the docs', 'Once more']);
    expect(checkpoints[0]!.id).toBe(promptId);
    expect(new Set(checkpoints.map((checkpoint) => checkpoint.id)).size).toBe(3);
  });

  it('PreToolUse of Edit, Write and NotebookEdit backs the files up before they change, and rewind brings them back', async () => {
    const project = tempProject();
    project.write('notes.txt', 'Shopping list\r\n- pears\r\n');
    project.write('bin/run.sh', '#!/bin/sh\necho run\n', 0o755);
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Edit things'));
    const initial = project.snapshot();
    for (const [tool, input] of [
      ['Edit', { file_path: project.file('notes.txt'), old_string: 'pears', new_string: 'plums' }],
      ['Write', { file_path: 'bin/run.sh', content: 'echo changed\n' }],
      ['Write', { file_path: project.file('new/made.txt'), content: 'new\n' }],
      ['NotebookEdit', { notebook_path: project.file('nb.ipynb'), new_source: 'x' }],
    ] as const) {
      expect(await runHook(cli, project.store, events.preTool(agent, tool, input))).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    project.write('notes.txt', 'Shopping list\r\n- plums\r\n');
    project.write('bin/run.sh', 'echo changed\n', 0o644);
    project.write('new/made.txt', 'new\n');
    project.write('nb.ipynb', '{}');
    const [checkpoint] = await checkpointsOf(project.store, agent.sessionId);
    expect(relativeTo(project.root, checkpoint!.files)).toEqual(['bin/run.sh', 'nb.ipynb', 'new/made.txt', 'notes.txt']);
    const rewound = await rewindable(cli, project.store, ['rewind', agent.sessionId, checkpoint!.id, '--yes']);
    expect(rewound.code).toBe(0);
    expect(withoutDirectories(project.snapshot())).toEqual(withoutDirectories(initial));
  });

  it('PreToolUse and PostToolUse of Bash around sed -i, rm, mv and redirects: rewind restores every file byte for byte', async () => {
    const project = tempProject();
    project.write('src/app.ts', 'export const app = 1;\n');
    project.write('README.md', '# demo\n');
    project.write('data.bin', Buffer.from([0, 1, 2, 255, 254]));
    project.write('old-name.txt', 'moved\n');
    project.write('.gitignore', 'build/\n');
    project.write('build/out.js', 'ignored\n');
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Run the codemod'));
    const initial = project.snapshot();
    const input = { command: "sed -i 's/1/2/' src/app.ts; rm README.md data.bin; mv old-name.txt new-name.txt; echo generated > gen.txt; mkdir -p out && echo x > out/deep.txt" };
    const pre = events.preTool(agent, 'Bash', input);
    expect(await runHook(cli, project.store, pre)).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(await shell(project.root, input.command)).toBe(0);
    expect(await runHook(cli, project.store, events.postTool(agent, 'Bash', input, pre.tool_use_id))).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(project.exists('README.md')).toBe(false);

    // A second turn: another command, then the rewind to before the first prompt undoes both.
    await runHook(cli, project.store, events.prompt(agent, 'Again'));
    const second = { command: 'echo more >> src/app.ts; rm gen.txt' };
    const pre2 = events.preTool(agent, 'Bash', second);
    await runHook(cli, project.store, pre2);
    await shell(project.root, second.command);
    await runHook(cli, project.store, events.postTool(agent, 'Bash', second, pre2.tool_use_id));

    const [first] = await checkpointsOf(project.store, agent.sessionId);
    const rewound = await rewindable(cli, project.store, ['rewind', agent.sessionId, first!.id, '--yes']);
    expect(rewound.stderr).toBe('');
    expect(rewound.code).toBe(0);
    expect(withoutDirectories(project.snapshot())).toEqual(withoutDirectories(initial));
  });

  it('a file that cannot be backed up blocks the call: exit code 2 and the reason on stderr, for Claude', async () => {
    const project = tempProject();
    project.write('dir/file.txt', 'x');
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Try'));
    const outside = await runHook(cli, project.store, events.preTool(agent, 'Write', { file_path: path.join(project.outside, 'escape.txt'), content: 'no' }));
    expect(outside.code).toBe(2);
    expect(outside.stdout).toBe('');
    expect(outside.stderr).toMatch(/^rewindable could not back up the files before this Write call, so the call was blocked: .*escape\.txt is outside the project root/);
    // The reader runs the CLI: the remedy is its flag, not the library's option.
    expect(outside.stderr).toContain('--extra-root');
    expect(outside.stderr).not.toContain('extraRoots');
    // An additional directory given with --extra-root is backed up like the project.
    const allowed = await runHook(cli, project.store, events.preTool(agent, 'Write', { file_path: path.join(project.outside, 'escape.txt'), content: 'no' }), ['--extra-root', project.outside]);
    expect(allowed).toEqual({ code: 0, stdout: '', stderr: '' });
    const directory = await runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file('dir'), old_string: 'a', new_string: 'b' }));
    expect(directory.code).toBe(2);
    expect(directory.stderr).toMatch(/blocked: .*dir/);
    const noPath = await runHook(cli, project.store, events.preTool(agent, 'Edit', { old_string: 'a', new_string: 'b' }));
    expect(noPath.code).toBe(2);
    expect(noPath.stderr).toMatch(/Edit input has no "file_path" string/);
  });

  it('a store that cannot be written: a tool call is blocked, a prompt and an after-tool scan warn the user with a systemMessage', async () => {
    const project = tempProject();
    project.write('a.txt', 'a');
    const agent = agentSession(project.root);
    const broken = project.write('../not-a-directory', 'a file where the store should be');
    const prompt = await runHook(cli, broken, events.prompt(agent, 'Hello'));
    expect(prompt.code).toBe(0);
    expect(JSON.parse(prompt.stdout)).toEqual({ systemMessage: expect.stringMatching(/^rewindable took no checkpoint for this prompt/) });
    const edit = await runHook(cli, broken, events.preTool(agent, 'Edit', { file_path: project.file('a.txt'), old_string: 'a', new_string: 'b' }));
    expect(edit.code).toBe(2);
    expect(edit.stderr).toMatch(/^rewindable could not back up the files before this Edit call, so the call was blocked/);
    const bash = await runHook(cli, broken, events.postTool(agent, 'Bash', { command: 'true' }, 'toolu_x'));
    expect(bash.code).toBe(0);
    expect(JSON.parse(bash.stdout).systemMessage).toMatch(/^rewindable could not record what this Bash call changed/);
  });

  it('malformed input: a tool hook blocks, anything else is a non-blocking error; events it does not handle pass', async () => {
    const project = tempProject();
    const garbage = await runHook(cli, project.store, 'not json');
    expect(garbage.code).toBe(1);
    expect(garbage.stderr).toMatch(/not JSON/);
    const noSession = await runHook(cli, project.store, { hook_event_name: 'PreToolUse', cwd: project.root, tool_name: 'Bash', tool_input: {} });
    expect(noSession.code).toBe(2);
    expect(noSession.stderr).toMatch(/"session_id"/);
    const read = await runHook(cli, project.store, events.preTool(agentSession(project.root), 'Read', { file_path: project.file('a') }));
    expect(read).toEqual({ code: 0, stdout: '', stderr: '' });
    const stop = await runHook(cli, project.store, { hook_event_name: 'Stop', session_id: 'x', cwd: project.root });
    expect(stop).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(fs.existsSync(project.store)).toBe(false);
  });

  it('two hook processes at once, and a hook while another process holds the session, both succeed', async () => {
    const project = tempProject();
    for (let index = 0; index < 6; index++) project.write(`file-${index}.txt`, `content ${index}\n`);
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Parallel edits'));
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, index) => runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file(`file-${index}.txt`), old_string: 'content', new_string: 'changed' }))),
    );
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0, 0, 0]);
    const [checkpoint] = await checkpointsOf(project.store, agent.sessionId);
    expect(relativeTo(project.root, checkpoint!.files)).toEqual(Array.from({ length: 6 }, (_, index) => `file-${index}.txt`));

    // Another process holds the session; the hook waits for it rather than fail.
    const holder = await holdSession(project.root, project.store, agent.sessionId);
    const waiting = runHook(cli, project.store, events.preTool(agent, 'Write', { file_path: project.file('late.txt'), content: 'late' }));
    const refused = await runHook(cli, project.store, events.preTool(agent, 'Write', { file_path: project.file('later.txt'), content: 'later' }), ['--lock-wait', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/is locked/);
    holder.kill();
    expect((await waiting).code).toBe(0);
    expect(relativeTo(project.root, (await checkpointsOf(project.store, agent.sessionId))[0]!.files)).toContain('late.txt');
  });
});

function relativeTo(root: string, files: string[]): string[] {
  return files.map((file) => path.relative(root, file)).sort();
}

function withoutDirectories(snapshot: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot).filter(([name]) => !name.endsWith('/')));
}

const holderScript = path.join(path.dirname(fileURLToPath(import.meta.url)), '../cli/helpers/session-holder.ts');

/** A process that opens the session for writing and keeps it until killed. */
async function holdSession(cwd: string, storeDir: string, sessionId: string): Promise<{ kill(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', holderScript, JSON.stringify({ cwd, storeDir, session: { resume: sessionId } })], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('holding') && resolve());
    child.on('exit', (code) => reject(new Error(`the session holder exited with ${code}`)));
  });
  return { kill: () => child.kill('SIGKILL') };
}
