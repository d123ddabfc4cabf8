import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, runCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { tempProject, type TempProject } from '../helpers/temp-project.js';
import { agentSession, events, hookEnvironment, rewindable, runHook, shell } from './helpers/hook-runner.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(async () => {
  if (cli === undefined) return;
  // Every server these tests started, stopped before their binary goes.
  await runCli(cli, ['hooks', 'stop', '--all'], { env: hookEnvironment(cli, cli.home) });
  cli.remove();
});

interface ListedServer {
  project: string;
  pid: number;
  idleSeconds: number;
  events: number;
}

async function serversOf(project: TempProject, env: Record<string, string> = {}): Promise<ListedServer[]> {
  const listed = await runCli(cli, ['hooks', 'status', '--json'], { env: hookEnvironment(cli, project.store, env) });
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as { servers: ListedServer[] }).servers.filter((server) => server.project === project.root);
}

async function checkpointIds(project: TempProject, sessionId: string): Promise<Array<{ id: string; kind: string; prompt?: string }>> {
  const listed = await rewindable(cli, project.store, ['checkpoints', sessionId, '--json']);
  expect(listed.stderr).toBe('');
  return (JSON.parse(listed.stdout) as { checkpoints: Array<{ id: string; kind: string; prompt?: string }> }).checkpoints;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ok = { code: 0, stdout: '', stderr: '' };

describe('rewindable hook through the resident hook server', () => {
  it('the first hook call starts the project\'s server and later calls reuse it', async () => {
    const project = tempProject();
    project.write('a.txt', 'first\n');
    const agent = agentSession(project.root);
    expect(await serversOf(project)).toEqual([]);
    expect(await runHook(cli, project.store, events.prompt(agent, 'Start'))).toEqual(ok);
    const [started] = await serversOf(project);
    expect(started).toMatchObject({ project: project.root, events: 1 });
    expect(await runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file('a.txt'), old_string: 'first', new_string: 'second' }))).toEqual(ok);
    const servers = await serversOf(project);
    expect(servers).toHaveLength(1);
    expect(servers[0]).toMatchObject({ pid: started!.pid, events: 2 });
    // Another project gets a server of its own.
    const other = tempProject();
    await runHook(cli, other.store, events.prompt(agentSession(other.root), 'Elsewhere'));
    expect((await serversOf(other))[0]!.pid).not.toBe(started!.pid);
  });

  it('answers byte for byte what the hook answers in its own process, failures included', async () => {
    const run = async (environment: Record<string, string>) => {
      const project = tempProject();
      project.write('notes.txt', 'one\n');
      fs.writeFileSync(path.join(project.outside, 'secret.txt'), 'outside\n');
      const agent = { sessionId: 'not-a-uuid-session', cwd: project.root };
      const sequence: Array<object | string> = [
        events.prompt(agent, 'Edit things'),
        events.preTool(agent, 'Edit', { file_path: project.file('notes.txt'), old_string: 'one', new_string: 'two' }),
        events.preTool(agent, 'Write', { file_path: path.join(project.outside, 'secret.txt'), content: 'x' }),
        events.preTool(agent, 'Bash', { command: 'true' }, 'toolu_bash1'),
        events.postTool(agent, 'Bash', { command: 'true' }, 'toolu_bash1'),
        events.preTool(agent, 'Edit', {}),
        { ...events.prompt(agent, 'x'), session_id: 7 },
        '{"hook_event_name": "PreToolUse", ',
        events.prompt(agent, 'Second'),
      ];
      const answers = [];
      for (const event of sequence) {
        const answer = await runHook(cli, project.store, event, [], environment);
        answers.push({ ...answer, stdout: answer.stdout.replaceAll(path.dirname(project.root), '<base>'), stderr: answer.stderr.replaceAll(path.dirname(project.root), '<base>') });
      }
      return { answers, servers: (await serversOf(project, environment)).length };
    };
    const inProcess = await run({ REWINDABLE_HOOK_SERVER: 'off' });
    const served = await run({});
    expect(inProcess.servers).toBe(0);
    expect(served.servers).toBe(1);
    expect(served.answers).toEqual(inProcess.answers);
    expect(inProcess.answers.map((answer) => answer.code)).toEqual([0, 0, 2, 0, 0, 2, 0, 1, 0]);
  });

  it('lets go of the session between events: a rewind runs, and the next hook sees the rewound session', async () => {
    const project = tempProject();
    project.write('a.txt', 'before\n');
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Change a'));
    const initial = project.snapshot();
    await runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file('a.txt'), old_string: 'before', new_string: 'after' }));
    project.write('a.txt', 'after\n');
    const [pid] = (await serversOf(project)).map((server) => server.pid);

    const [first] = await checkpointIds(project, agent.sessionId);
    const rewound = await rewindable(cli, project.store, ['rewind', agent.sessionId, first!.id, '--yes']);
    expect(rewound.code).toBe(0);
    expect(project.snapshot()).toEqual(initial);

    // The server reads the rewound session from disk: its next checkpoint follows the undo point.
    expect(await runHook(cli, project.store, events.prompt(agent, 'Next'))).toEqual(ok);
    expect((await checkpointIds(project, agent.sessionId)).map((checkpoint) => checkpoint.prompt ?? checkpoint.kind)).toEqual(['Change a', 'undo', 'Next']);
    expect((await serversOf(project)).map((server) => server.pid)).toEqual([pid]);
    // And the undo point still undoes the rewind.
    const checkpoints = await checkpointIds(project, agent.sessionId);
    expect((await rewindable(cli, project.store, ['rewind', agent.sessionId, checkpoints[1]!.id, '--yes'])).code).toBe(0);
    expect(project.read('a.txt').toString()).toBe('after\n');
  });

  it('once its journal runs, Bash hooks still see every change: a rewind brings back the tree byte for byte', async () => {
    const project = tempProject();
    for (const name of ['a.txt', 'b.txt', 'g.txt', 'keep/k.txt']) project.write(name, `${name} v1\n`);
    const agent = agentSession(project.root);
    const bash = async (command: string) => {
      const input = { command };
      const pre = events.preTool(agent, 'Bash', input);
      expect(await runHook(cli, project.store, pre)).toEqual(ok);
      await shell(project.root, command);
      expect(await runHook(cli, project.store, events.postTool(agent, 'Bash', input, pre.tool_use_id))).toEqual(ok);
    };
    await runHook(cli, project.store, events.prompt(agent, 'First turn'));
    await bash('echo one > one.txt');
    // The prompts after a scan start the server's file watcher and wait out its start-up.
    await runHook(cli, project.store, events.prompt(agent, 'Second turn'));
    await bash('echo two >> one.txt');
    expect(await runHook(cli, project.store, events.prompt(agent, 'Third turn'))).toEqual(ok);
    const beforeThird = project.snapshot();
    await bash("sed -i 's/v1/v2/' a.txt && rm b.txt && mkdir -p d/e && echo deep > d/e/f.txt && mv g.txt h.txt");
    await bash('echo more >> a.txt && rm -r keep && ln -s a.txt link');
    expect(await runHook(cli, project.store, events.prompt(agent, 'Fourth turn'))).toEqual(ok);
    await bash('echo late > late.txt');
    expect(project.read('a.txt').toString()).toBe('a.txt v2\nmore\n');

    const third = (await checkpointIds(project, agent.sessionId)).find((checkpoint) => checkpoint.prompt === 'Third turn')!;
    const rewound = await rewindable(cli, project.store, ['rewind', agent.sessionId, third.id, '--yes']);
    expect(rewound.stderr).toBe('');
    expect(rewound.code).toBe(0);
    // Every file as before the third turn; directories made by shell commands stay (empty), as the README's limits say.
    const { 'd/': made, 'd/e/': madeInside, ...rest } = project.snapshot();
    expect([made, madeInside]).toEqual(['dir 755', 'dir 755']);
    expect(rest).toEqual(beforeThird);
  });

  it('a server killed in the middle of an event: the hook still answers, nothing acknowledged is lost, and a rewind restores every file', async () => {
    const project = tempProject();
    for (let index = 0; index < 3000; index++) project.write(`tree/${index % 30}/file-${index}.txt`, `content ${index}\n`.repeat(20));
    const agent = agentSession(project.root);
    // The first scan is the Bash hook's here (not the server's after the prompt), so the kill comes in the middle of an event.
    const environment = { REWINDABLE_HOOK_EARLY_SCAN: 'off' };
    await runHook(cli, project.store, events.prompt(agent, 'Edits and a command'), [], environment);
    const initial = project.snapshot();
    await runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file('tree/0/file-0.txt'), old_string: 'content', new_string: 'changed' }));
    project.write('tree/0/file-0.txt', 'changed\n');
    const [server] = await serversOf(project);

    // The first scan of 3,000 files takes the server a while: it is killed once it holds the session.
    const lock = fs.readdirSync(path.join(project.store, 'projects')).map((key) => path.join(project.store, 'projects', key, `${agent.sessionId}.lock`))[0]!;
    const pre = events.preTool(agent, 'Bash', { command: 'rm -r tree/1; echo new > made.txt' });
    const answered = runHook(cli, project.store, pre);
    await until(() => fs.existsSync(lock), 'the server holds the session');
    process.kill(server!.pid, 'SIGKILL');
    expect(await answered).toEqual(ok);
    expect(isAlive(server!.pid)).toBe(false);

    await shell(project.root, 'rm -r tree/1; echo new > made.txt');
    expect(await runHook(cli, project.store, events.postTool(agent, 'Bash', {}, pre.tool_use_id))).toEqual(ok);
    // A new server took over.
    const [next] = await serversOf(project);
    expect(next!.pid).not.toBe(server!.pid);

    const [first] = await checkpointIds(project, agent.sessionId);
    const rewound = await rewindable(cli, project.store, ['rewind', agent.sessionId, first!.id, '--yes']);
    expect(rewound.code).toBe(0);
    expect(project.snapshot()).toEqual(initial);
  });

  /** A socket directory prepared by `prepare` is refused: every hook still works, in its own process, and no socket is made. */
  async function refusedDirectory(prepare: (directory: string) => void): Promise<void> {
    const project = tempProject();
    const runtime = path.join(project.outside, 'run');
    fs.mkdirSync(runtime, { mode: 0o700 });
    const directory = path.join(runtime, 'rewindable');
    prepare(directory);
    const environment = { XDG_RUNTIME_DIR: runtime };
    const agent = agentSession(project.root);
    project.write('a.txt', 'a\n');
    expect(await runHook(cli, project.store, events.prompt(agent, 'Start'), [], environment)).toEqual(ok);
    expect(await runHook(cli, project.store, events.preTool(agent, 'Write', { file_path: project.file('a.txt'), content: 'b' }), [], environment)).toEqual(ok);
    expect((await checkpointIds(project, agent.sessionId))[0]).toMatchObject({ prompt: 'Start' });
    for (const candidate of [directory, `${directory}-real`]) if (fs.existsSync(candidate)) expect(fs.readdirSync(candidate)).toEqual([]);
    const status = await runCli(cli, ['hooks', 'status', '--json'], { env: hookEnvironment(cli, project.store, environment) });
    expect(JSON.parse(status.stdout)).toMatchObject({ servers: [], refused: expect.stringContaining(directory) });
  }

  it('a socket directory others may enter (mode 0755) is never used: the hook runs in its own process', async () => {
    await refusedDirectory((directory) => fs.mkdirSync(directory, { mode: 0o755 }));
  });

  it('a socket directory that is a symbolic link is never used, nor where it leads', async () => {
    await refusedDirectory((directory) => {
      fs.mkdirSync(`${directory}-real`, { mode: 0o700 });
      fs.symlinkSync(`${directory}-real`, directory);
    });
  });

  // Only root can give a directory to another user.
  it.skipIf(process.getuid?.() !== 0)('a socket directory owned by another user is never used', async () => {
    await refusedDirectory((directory) => {
      fs.mkdirSync(directory, { mode: 0o700 });
      fs.chownSync(directory, 12345, 12345);
    });
  });

  it('a server exits after REWINDABLE_HOOK_SERVER_IDLE seconds without events, and removes its socket', async () => {
    const project = tempProject();
    const environment = { REWINDABLE_HOOK_SERVER_IDLE: '1' };
    await runHook(cli, project.store, events.prompt(agentSession(project.root), 'Start'), [], environment);
    const [server] = await serversOf(project);
    expect(server).toBeDefined();
    await until(() => !isAlive(server!.pid), 'the idle server exits');
    expect(await serversOf(project)).toEqual([]);
  });

  it('hooks stop stops the project\'s server (or every one with --all); the next hook starts a new one', async () => {
    const project = tempProject();
    const other = tempProject();
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Start'));
    await runHook(cli, other.store, events.prompt(agentSession(other.root), 'Start'));
    const [server] = await serversOf(project);
    const [otherServer] = await serversOf(other);
    const stopped = await runCli(cli, ['hooks', 'stop', '--project', project.root], { env: hookEnvironment(cli, project.store) });
    expect(stopped).toEqual({ code: 0, stdout: 'Stopped 1 hook server.\n', stderr: '' });
    expect(isAlive(server!.pid)).toBe(false);
    expect(isAlive(otherServer!.pid)).toBe(true);
    expect(await runHook(cli, project.store, events.prompt(agent, 'Again'))).toEqual(ok);
    expect((await serversOf(project))[0]!.pid).not.toBe(server!.pid);
    expect((await checkpointIds(project, agent.sessionId)).map((checkpoint) => checkpoint.prompt)).toEqual(['Start', 'Again']);
    const all = await runCli(cli, ['hooks', 'stop', '--all', '--json'], { env: hookEnvironment(cli, project.store) });
    expect((JSON.parse(all.stdout) as { stopped: ListedServer[] }).stopped.map((listed) => listed.project)).toEqual(expect.arrayContaining([project.root, other.root]));
    expect(isAlive(otherServer!.pid)).toBe(false);
  });

  it('a server of another build is replaced by one of this build', async () => {
    const project = tempProject();
    const agent = agentSession(project.root);
    await runHook(cli, project.store, events.prompt(agent, 'Start'));
    const [old] = await serversOf(project);
    // A rebuilt binary: the same version, a newer script.
    const later = new Date(Date.now() + 5_000);
    fs.utimesSync(cli.bin, later, later);
    expect(await runHook(cli, project.store, events.prompt(agent, 'After the upgrade'))).toEqual(ok);
    await until(() => !isAlive(old!.pid), 'the old server exits');
    const [current] = await serversOf(project);
    expect(current!.pid).not.toBe(old!.pid);
    expect((await checkpointIds(project, agent.sessionId)).map((checkpoint) => checkpoint.prompt)).toEqual(['Start', 'After the upgrade']);
  });
});
