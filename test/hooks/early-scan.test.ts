import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningServers } from '../../src/hooks/server/running-servers.js';
import { buildCli, runCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { tempProject, type TempProject } from '../helpers/temp-project.js';
import { agentSession, events, hookEnvironment, rewindable, runHook, shell, type AgentSession } from './helpers/hook-runner.js';

let cli: BuiltCli;
beforeAll(async () => {
  cli = await buildCli();
});
afterAll(async () => {
  if (cli === undefined) return;
  await runCli(cli, ['hooks', 'stop', '--all'], { env: hookEnvironment(cli, cli.home) });
  cli.remove();
});

const ok = { code: 0, stdout: '', stderr: '' };
const off = { REWINDABLE_HOOK_EARLY_SCAN: 'off' };

interface LogRecord {
  type: string;
  created?: string[];
  modified?: string[];
  deleted?: string[];
  /** A scan's backups: [stored path, sha256, size, mode, stat signature]. */
  files?: Array<[string, ...unknown[]]>;
}

/** The session's log, record by record, as the store has it on disk. */
function logOf(project: TempProject, sessionId: string): LogRecord[] {
  const projects = path.join(project.store, 'projects');
  for (const key of fs.readdirSync(projects)) {
    const file = path.join(projects, key, `${sessionId}.jsonl`);
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as LogRecord);
  }
  return [];
}

/** The command records of the session: what each Bash call created, modified and deleted. */
function commandsOf(project: TempProject, sessionId: string): Array<Pick<LogRecord, 'created' | 'modified' | 'deleted'>> {
  return logOf(project, sessionId)
    .filter((record) => record.type === 'capture')
    .map(({ created, modified, deleted }) => ({ created, modified, deleted }));
}

/** The paths the session's scans backed up because they were there: the first scan's work. */
function scanBackedUp(project: TempProject, sessionId: string): string[] {
  return logOf(project, sessionId)
    .filter((record) => record.type === 'scan-backups')
    .flatMap((record) => (record.files ?? []).map(([file]) => file))
    .sort();
}

/** Whether the session's lock file is there: someone holds the session. */
function lockHeld(project: TempProject, sessionId: string): boolean {
  const projects = path.join(project.store, 'projects');
  return fs.existsSync(projects) && fs.readdirSync(projects).some((key) => fs.existsSync(path.join(projects, key, `${sessionId}.lock`)));
}

/** The size of the session's pack: the backups stored so far, whether a record names them or not. */
function packBytes(project: TempProject, sessionId: string): number {
  const packs = path.join(project.store, 'blobs', 'packs');
  if (!fs.existsSync(packs)) return 0;
  return fs.readdirSync(packs).reduce((sum, key) => sum + (fs.statSync(path.join(packs, key, `${sessionId}.pack`), { throwIfNoEntry: false })?.size ?? 0), 0);
}

async function serverOf(project: TempProject, env: Record<string, string> = {}) {
  const { servers } = await runningServers(hookEnvironment(cli, project.store, env));
  return servers.find((server) => server.target.project === project.root);
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function firstScanDone(project: TempProject, count = 1): Promise<void> {
  await until(async () => ((await serverOf(project))?.earlyScans?.completed ?? 0) >= count, 'the early first scan is done');
}

async function bash(project: TempProject, agent: AgentSession, command: string, env: Record<string, string> = {}): Promise<void> {
  const input = { command };
  const pre = events.preTool(agent, 'Bash', input);
  expect(await runHook(cli, project.store, pre, [], env)).toEqual(ok);
  await shell(project.root, command);
  expect(await runHook(cli, project.store, events.postTool(agent, 'Bash', input, pre.tool_use_id), [], env)).toEqual(ok);
}

/**
 * The command's record is `expected` in both projects (early scan on, and off), their trees are alike, and a rewind
 * of the early one to its first checkpoint (the prompt) brings back `promptTime` byte for byte.
 */
async function expectSameRecordThenRewind(
  runs: { early: TempProject; earlyAgent: AgentSession; late: TempProject; lateAgent: AgentSession },
  expected: Pick<LogRecord, 'created' | 'modified' | 'deleted'>,
  promptTime: ReturnType<TempProject['snapshot']>,
): Promise<void> {
  const { early, earlyAgent, late, lateAgent } = runs;
  expect(commandsOf(late, lateAgent.sessionId)).toEqual([expected]);
  expect(commandsOf(early, earlyAgent.sessionId)).toEqual([expected]);
  expect(early.snapshot()).toEqual(late.snapshot());
  const [first] = JSON.parse((await rewindable(cli, early.store, ['checkpoints', earlyAgent.sessionId, '--json'])).stdout).checkpoints as Array<{ id: string }>;
  const rewound = await rewindable(cli, early.store, ['rewind', earlyAgent.sessionId, first!.id, '--yes']);
  expect(rewound.stderr).toBe('');
  expect(rewound.code).toBe(0);
  expect(early.snapshot()).toEqual(promptTime);
}

/** Two projects seeded alike, each with its agent session: one run with the early scan, one without. */
function twoRuns(seedWith: (project: TempProject) => void) {
  const early = tempProject();
  const late = tempProject();
  seedWith(early);
  seedWith(late);
  return { early, late, earlyAgent: agentSession(early.root), lateAgent: agentSession(late.root) };
}

function seed(project: TempProject): void {
  for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'sub/e.txt', 'sub/f.txt']) project.write(name, `${name} v1\n`);
}

/**
 * One first turn: the prompt, then what happens before the model's first
 * Bash call (the user changes files, an Edit), then the command. `wait`
 * runs between the prompt and the rest.
 */
async function firstTurn(project: TempProject, agent: AgentSession, env: Record<string, string>, wait: () => Promise<void>): Promise<void> {
  expect(await runHook(cli, project.store, events.prompt(agent, 'First turn'), [], env)).toEqual(ok);
  await wait();
  // Between the prompt and the first Bash call: the user edits, creates and deletes; the model edits with Edit.
  project.write('a.txt', 'a.txt changed by the user\n');
  project.write('new.txt', 'new by the user\n');
  fs.rmSync(project.file('c.txt'));
  expect(await runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file('b.txt'), old_string: 'v1', new_string: 'v2' }), [], env)).toEqual(ok);
  project.write('b.txt', 'b.txt v2\n');
  await bash(project, agent, "sed -i 's/v1/v9/' d.txt && rm sub/e.txt && echo made > made.txt && echo more >> a.txt && mv new.txt moved.txt", env);
}

describe('the session\'s first scan, run by the hook server after the first prompt', () => {
  it('runs in the background after the first prompt: the first Bash hook records what a full scan records then', async () => {
    const { early, late, earlyAgent, lateAgent } = twoRuns(seed);
    const promptTime = early.snapshot();

    await firstTurn(early, earlyAgent, {}, async () => {
      await firstScanDone(early);
      // The prompt's answer did not wait for it, and the scan backed up every file then.
      expect(scanBackedUp(early, earlyAgent.sessionId)).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'sub/e.txt', 'sub/f.txt']);
    });
    await firstTurn(late, lateAgent, off, async () => {
      expect(scanBackedUp(late, lateAgent.sessionId)).toEqual([]);
    });
    expect((await serverOf(late, off))?.earlyScans?.completed).toBe(0);

    // The command's record, from the scan before it: the same with the early scan as with the full scan at the Bash hook.
    const expected = { created: ['made.txt', 'moved.txt'], modified: ['a.txt', 'd.txt'], deleted: ['new.txt', 'sub/e.txt'] };
    // A rewind to the prompt: with the early scan, the tree as it was at the prompt, byte for byte (what the user
    // changed before the Bash call was backed up as it was at the prompt; the file they created goes).
    await expectSameRecordThenRewind({ early, earlyAgent, late, lateAgent }, expected, promptTime);
  });

  it('a Bash hook right after the prompt waits for the scan in progress, and sees every change made during it', async () => {
    const early = tempProject();
    const late = tempProject();
    for (const project of [early, late]) {
      seed(project);
      for (let index = 0; index < 1500; index++) project.write(`tree/${index % 15}/file-${index}.txt`, `content ${index}\n`.repeat(10));
    }
    const earlyAgent = agentSession(early.root);
    const lateAgent = agentSession(late.root);
    // Whatever the scan had walked when the user's changes came: the same record as the full scan at the Bash hook.
    await firstTurn(early, earlyAgent, {}, async () => undefined);
    await firstTurn(late, lateAgent, off, async () => undefined);
    const expected = { created: ['made.txt', 'moved.txt'], modified: ['a.txt', 'd.txt'], deleted: ['new.txt', 'sub/e.txt'] };
    expect(commandsOf(early, earlyAgent.sessionId)).toEqual([expected]);
    expect(commandsOf(late, lateAgent.sessionId)).toEqual([expected]);
    expect((await serverOf(early))?.earlyScans?.completed).toBe(1);

    // The next turn's rewind target is exact in both.
    for (const [project, agent, env] of [[early, earlyAgent, {}], [late, lateAgent, off]] as const) {
      expect(await runHook(cli, project.store, events.prompt(agent, 'Second turn'), [], env)).toEqual(ok);
      const second = project.snapshot();
      await bash(project, agent, 'rm -r tree/3 && echo x >> tree/4/file-4.txt && echo y > sub/f.txt', env);
      const checkpoints = JSON.parse((await rewindable(cli, project.store, ['checkpoints', agent.sessionId, '--json'])).stdout).checkpoints as Array<{ id: string; prompt?: string }>;
      const target = checkpoints.find((checkpoint) => checkpoint.prompt === 'Second turn')!;
      expect((await rewindable(cli, project.store, ['rewind', agent.sessionId, target.id, '--yes'])).code).toBe(0);
      expect(project.snapshot()).toEqual(second);
    }
  });

  it('an Edit hook that comes during the scan is answered even without a lock wait, and the scan still covers the rest', async () => {
    const project = tempProject();
    seed(project);
    for (let index = 0; index < 3000; index++) project.write(`tree/${index % 30}/file-${index}.txt`, `content ${index}\n`.repeat(10));
    const agent = agentSession(project.root);
    const initial = project.snapshot();
    expect(await runHook(cli, project.store, events.prompt(agent, 'Edit at once'))).toEqual(ok);
    // The prompt was answered: the session's lock is the scan's now. An Edit that may not wait for a lock at all still gets its turn.
    await until(() => lockHeld(project, agent.sessionId), 'the early scan holds the session');
    const edit = events.preTool(agent, 'Edit', { file_path: project.file('tree/0/file-0.txt'), old_string: 'content', new_string: 'changed' });
    expect(await runHook(cli, project.store, edit, ['--lock-wait', '0'])).toEqual(ok);
    project.write('tree/0/file-0.txt', 'changed\n');
    await firstScanDone(project);
    await bash(project, agent, 'rm -r tree/1 && echo new > made.txt');
    const [first] = JSON.parse((await rewindable(cli, project.store, ['checkpoints', agent.sessionId, '--json'])).stdout).checkpoints as Array<{ id: string }>;
    expect((await rewindable(cli, project.store, ['rewind', agent.sessionId, first!.id, '--yes'])).code).toBe(0);
    expect(project.snapshot()).toEqual(initial);
  });

  it('a server killed in the middle of the scan: the next hook scans again, trusts nothing half-recorded, and a rewind restores every file', async () => {
    const project = tempProject();
    for (let index = 0; index < 3000; index++) project.write(`tree/${index % 30}/file-${index}.txt`, `content ${index}\n`.repeat(20));
    const agent = agentSession(project.root);
    const initial = project.snapshot();
    expect(await runHook(cli, project.store, events.prompt(agent, 'Scan then die'))).toEqual(ok);
    const server = await serverOf(project);
    // The prompt was answered; the scan holds the session while it runs: the server is killed then.
    await until(() => lockHeld(project, agent.sessionId), 'the early scan holds the session');
    process.kill(server!.pid, 'SIGKILL');
    await until(async () => (await serverOf(project)) === undefined, 'the killed server is gone');

    await bash(project, agent, 'rm -r tree/1 && echo new > made.txt && echo more >> tree/2/file-2.txt');
    const next = await serverOf(project);
    expect(next!.pid).not.toBe(server!.pid);
    const removed = Array.from({ length: 100 }, (_, index) => `tree/1/file-${1 + index * 30}.txt`).sort();
    expect(commandsOf(project, agent.sessionId)).toEqual([{ created: ['made.txt'], modified: ['tree/2/file-2.txt'], deleted: removed }]);
    // Every file backed up once, by one scan or the other: none twice, none missing.
    const backedUp = scanBackedUp(project, agent.sessionId);
    expect(new Set(backedUp).size).toBe(backedUp.length);
    expect(backedUp).toHaveLength(3000);

    const [first] = JSON.parse((await rewindable(cli, project.store, ['checkpoints', agent.sessionId, '--json'])).stdout).checkpoints as Array<{ id: string }>;
    expect((await rewindable(cli, project.store, ['rewind', agent.sessionId, first!.id, '--yes'])).code).toBe(0);
    expect(project.snapshot()).toEqual(initial);
  });

  it('REWINDABLE_HOOK_EARLY_SCAN=off: a session that never runs Bash backs up nothing but what its tools change', async () => {
    const project = tempProject();
    seed(project);
    const agent = agentSession(project.root);
    expect(await runHook(cli, project.store, events.prompt(agent, 'Only edits'), [], off)).toEqual(ok);
    expect(await runHook(cli, project.store, events.preTool(agent, 'Edit', { file_path: project.file('a.txt'), old_string: 'v1', new_string: 'v2' }), [], off)).toEqual(ok);
    expect(await runHook(cli, project.store, events.prompt(agent, 'Next'), [], off)).toEqual(ok);
    expect(scanBackedUp(project, agent.sessionId)).toEqual([]);
    expect((await serverOf(project, off))?.earlyScans?.completed).toBe(0);
  });
});

/** For tests only: the server's first early scan waits after this many files until an event is queued (see hook-server.ts). */
const hold = { REWINDABLE_HOOK_TEST_EARLY_SCAN_HOLD: '100' };

/** The small files of `seed`, and 120 of 200 KiB: a scan stores its backups by 16 MiB, so some are stored before the hold. */
function seedLarge(project: TempProject): void {
  seed(project);
  for (let index = 0; index < 120; index++) project.write(`large/${index % 4}/file-${index}.bin`, Buffer.alloc(200 * 1024, `file ${index} `));
}

/** Until the early scan, held in the middle, has stored backups: it walked the project and began to back it up. */
async function scanHeld(project: TempProject, agent: AgentSession): Promise<void> {
  await until(() => lockHeld(project, agent.sessionId) && packBytes(project, agent.sessionId) > 0, 'the early scan is held with backups stored');
}

/** What happens before the model's first Bash call, by the user, and the call itself (see `firstTurn`). */
async function changesThenBash(project: TempProject, agent: AgentSession, env: Record<string, string>): Promise<void> {
  project.write('a.txt', 'a.txt changed by the user\n');
  project.write('new.txt', 'new by the user\n');
  fs.rmSync(project.file('c.txt'));
  await bash(project, agent, "sed -i 's/v1/v9/' d.txt && rm sub/e.txt && echo made > made.txt && echo more >> a.txt && mv new.txt moved.txt", env);
}

describe('the early first scan gives way to the events that do not need it', () => {
  const expected = { created: ['made.txt', 'moved.txt'], modified: ['a.txt', 'd.txt'], deleted: ['new.txt', 'sub/e.txt'] };
  const editB = (project: TempProject, agent: AgentSession) => events.preTool(agent, 'Edit', { file_path: project.file('b.txt'), old_string: 'v1', new_string: 'v2' });

  it('an Edit during the scan stops it and is answered; the scan starts again and completes; the Bash hook records what a run without it records', async () => {
    const { early, late, earlyAgent, lateAgent } = twoRuns(seedLarge);
    const promptTime = early.snapshot();

    expect(await runHook(cli, early.store, events.prompt(earlyAgent, 'First turn'), [], hold)).toEqual(ok);
    await scanHeld(early, earlyAgent);
    expect(scanBackedUp(early, earlyAgent.sessionId)).toEqual([]);
    expect(await runHook(cli, early.store, editB(early, earlyAgent), [], hold)).toEqual(ok);
    // The Edit was served once the scan had given way to it, in the middle: backups stored, none recorded.
    expect((await serverOf(early))?.earlyScans?.stopped).toBe(1);
    early.write('b.txt', 'b.txt v2\n');
    // Started again after the Edit's answer, the scan completes; the one stopped recorded nothing, so every file
    // is backed up once, by the scan that completed, but the Edit's, which the Edit backed up.
    await firstScanDone(early);
    expect((await serverOf(early))?.earlyScans).toEqual({ completed: 1, stopped: 1 });
    const listed = await runCli(cli, ['hooks', 'status'], { env: hookEnvironment(cli, early.store, {}) });
    expect(listed.stdout.split('\n').find((line) => line.includes(early.root))).toContain('1 done, 1 stopped');
    const listedJson = await runCli(cli, ['hooks', 'status', '--json'], { env: hookEnvironment(cli, early.store, {}) });
    expect((JSON.parse(listedJson.stdout) as { servers: Array<{ project: string; earlyScans: unknown }> }).servers.find((server) => server.project === early.root)?.earlyScans).toEqual({ completed: 1, stopped: 1 });
    expect(scanBackedUp(early, earlyAgent.sessionId)).toEqual(Object.keys(promptTime).filter((file) => !file.endsWith('/') && file !== 'b.txt').sort());
    await changesThenBash(early, earlyAgent, hold);

    expect(await runHook(cli, late.store, events.prompt(lateAgent, 'First turn'), [], off)).toEqual(ok);
    expect(await runHook(cli, late.store, editB(late, lateAgent), [], off)).toEqual(ok);
    late.write('b.txt', 'b.txt v2\n');
    await changesThenBash(late, lateAgent, off);

    // A rewind to the prompt: every file as it was then, byte for byte (b.txt from the Edit's backup).
    await expectSameRecordThenRewind({ early, earlyAgent, late, lateAgent }, expected, promptTime);
  });

  it('a Bash hook during the scan waits for it: the scan is not stopped, and the command is recorded as a run without it records it', async () => {
    const { early, late, earlyAgent, lateAgent } = twoRuns(seedLarge);

    expect(await runHook(cli, early.store, events.prompt(earlyAgent, 'First turn'), [], hold)).toEqual(ok);
    await scanHeld(early, earlyAgent);
    // The user's changes come while the scan is held, after its walk: its journal sees them.
    await changesThenBash(early, earlyAgent, hold);
    expect((await serverOf(early))?.earlyScans).toEqual({ completed: 1, stopped: 0 });
    const backedUp = scanBackedUp(early, earlyAgent.sessionId);
    expect(new Set(backedUp).size).toBe(backedUp.length);

    expect(await runHook(cli, late.store, events.prompt(lateAgent, 'First turn'), [], off)).toEqual(ok);
    await changesThenBash(late, lateAgent, off);

    expect(commandsOf(late, lateAgent.sessionId)).toEqual([expected]);
    expect(commandsOf(early, earlyAgent.sessionId)).toEqual([expected]);
    expect(early.snapshot()).toEqual(late.snapshot());
  });
});
