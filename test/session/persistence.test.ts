import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey } from '../../src/index.js';
import { encodeLine } from '../../src/store/filesystem/log-lines.js';
import { runWorker } from '../helpers/child.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

function logPathOf(project: TempProject, sessionId: string): string {
  return path.join(project.store, 'projects', encodeProjectKey(project.root), `${sessionId}.jsonl`);
}

async function threeTurnSession(project: TempProject) {
  project.write('a.txt', 'alpha\n');
  project.write('b.bin', Buffer.from([0, 1, 2, 3, 255]));
  const manager = await project.open();
  const ids: string[] = [];
  for (let turn = 1; turn <= 3; turn += 1) {
    ids.push(await manager.checkpoint(newId()));
    await manager.trackEdit('a.txt');
    project.write('a.txt', `alpha\n${'turn\n'.repeat(turn)}`);
    await manager.trackEdit(`t${turn}.txt`);
    project.write(`t${turn}.txt`, `${turn}\n`);
    if (turn === 2) {
      await manager.trackEdit('b.bin');
      fs.rmSync(project.file('b.bin'));
    }
  }
  return { manager, ids };
}

describe('persistence', () => {
  it('stores the layout the spec describes: projects/<key>/<session>.jsonl and blobs/', async () => {
    const project = tempProject();
    const { manager } = await threeTurnSession(project);
    const log = logPathOf(project, manager.sessionId);
    expect(fs.existsSync(log)).toBe(true);
    expect(encodeProjectKey(project.root)).toMatch(/^[A-Za-z0-9-]+$/);
    const header = JSON.parse(fs.readFileSync(log, 'utf8').split('\n')[0]!);
    expect(header).toMatchObject({ type: 'session-start', sessionId: manager.sessionId, cwd: project.root });
    expect(fs.existsSync(path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${manager.sessionId}.pack`))).toBe(true);
  });

  it('a session resumed in another process rewinds exactly like the live one', async () => {
    const project = tempProject();
    const { manager, ids } = await threeTurnSession(project);
    const liveResults = [];
    for (const id of ids) liveResults.push(await manager.rewindFiles(id, { dryRun: true }));
    await manager.close();

    const child = runWorker({
      options: { cwd: project.root, storeDir: project.store, resume: manager.sessionId },
      steps: [...ids.map((id) => ({ do: 'rewind', id, dryRun: true })), { do: 'rewind', id: ids[0], dryRun: false }, { do: 'close' }],
    });
    const { code, lines } = await child.done;
    expect(code).toBe(0);
    const childResults = lines.filter((line) => 'rewind' in line).map((line) => line.rewind as Record<string, unknown>);
    expect(childResults.slice(0, 3)).toEqual(liveResults);
    expect(project.read('a.txt').toString()).toBe('alpha\n');
    expect(project.read('b.bin').equals(Buffer.from([0, 1, 2, 3, 255]))).toBe(true);
    expect(project.exists('t1.txt') || project.exists('t2.txt') || project.exists('t3.txt')).toBe(false);
  });

  it('drops a torn last line, then appends after the intact prefix', async () => {
    const project = tempProject();
    const { manager, ids } = await threeTurnSession(project);
    await manager.close();
    const log = logPathOf(project, manager.sessionId);
    fs.appendFileSync(log, '{"type":"checkpoint","id":"1234');

    const resumed = await project.open({ resume: manager.sessionId });
    expect((await resumed.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual(ids);
    const fourth = await resumed.checkpoint(newId());
    await resumed.close();

    const again = await project.open({ resume: manager.sessionId });
    expect((await again.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual([...ids, fourth]);
  });

  it('reopens a log cut at any byte to an exact prefix of its checkpoints', async () => {
    const project = tempProject();
    const { manager, ids } = await threeTurnSession(project);
    await manager.close();
    const log = logPathOf(project, manager.sessionId);
    const full = fs.readFileSync(log);
    const lineEnds: number[] = [];
    full.forEach((byte, index) => byte === 0x0a && lineEnds.push(index + 1));
    const lines = full.toString().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; id?: string });
    for (let cut = 0; cut <= full.length; cut += 7) {
      fs.writeFileSync(log, full.subarray(0, cut));
      const wholeLines = lineEnds.filter((end) => end <= cut).length;
      const expected = lines.slice(0, wholeLines).filter((line) => line.type === 'checkpoint').map((line) => line.id);
      if (wholeLines === 0) continue; // nothing intact: not a session yet
      const resumed = await project.open({ resume: manager.sessionId });
      expect((await resumed.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual(expected);
      await resumed.close();
    }
    expect(ids.length).toBe(3);
  });

  it('reports damage before the last line instead of guessing past it', async () => {
    const project = tempProject();
    const { manager } = await threeTurnSession(project);
    await manager.close();
    const log = logPathOf(project, manager.sessionId);
    const text = fs.readFileSync(log, 'utf8');
    const at = text.indexOf('"a.txt"') + 2;
    fs.writeFileSync(log, `${text.slice(0, at)}b${text.slice(at + 1)}`); // a.txt -> b.txt: valid JSON, wrong checksum

    await expect(project.open({ resume: manager.sessionId })).rejects.toMatchObject({
      code: 'LOG_CORRUPT',
      message: expect.stringMatching(/damaged at line \d+/),
    });
  });

  it('ignores record types it does not know', async () => {
    const project = tempProject();
    const { manager, ids } = await threeTurnSession(project);
    await manager.close();
    const log = logPathOf(project, manager.sessionId);
    fs.appendFileSync(log, encodeLine({ type: 'from-a-newer-version', payload: [1, 2, 3] }));

    const resumed = await project.open({ resume: manager.sessionId });
    expect((await resumed.listCheckpoints()).map((checkpoint) => checkpoint.id)).toEqual(ids);
    await resumed.rewindFiles(ids[0]!);
    expect(project.read('a.txt').toString()).toBe('alpha\n');
  });

  it('drops a last record whose backup did not survive, and keeps it dropped', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('a.txt');
    await manager.close();
    // Simulate a crash between the two flushes: the log line survived, the pack entry did not.
    fs.truncateSync(path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${manager.sessionId}.pack`), 0);

    const resumed = await project.open({ resume: manager.sessionId });
    expect((await resumed.listCheckpoints())[0]!.files).toEqual([]);
    await resumed.trackEdit('a.txt'); // tracked afresh: the file was never written after the lost backup
    project.write('a.txt', 'agent\n');
    await resumed.close();

    const again = await project.open({ resume: manager.sessionId });
    await again.rewindFiles(turn);
    expect(project.read('a.txt').toString()).toBe('a\n');
  });

  it('a process killed while writing leaves a log that reopens', async () => {
    const project = tempProject();
    const files = ['one.txt', 'two.txt', 'nested/three.txt'];
    for (let round = 0; round < 6; round += 1) {
      const sessionId = newId();
      const child = runWorker({
        options: { cwd: project.root, storeDir: project.store, sessionId, durability: round % 2 === 0 ? 'none' : 'full' },
        steps: [{ do: 'edit-loop', files, turns: 1000 }],
      });
      await child.waitFor((line) => line.turn === 2 + round * 3);
      child.child.kill('SIGKILL');
      await child.done;

      const resumed = await project.open({ resume: sessionId });
      const checkpoints = await resumed.listCheckpoints();
      expect(checkpoints.length).toBeGreaterThanOrEqual(3 + round * 3);
      const result = await resumed.rewindFiles(checkpoints[0]!.id);
      expect(result.canRewind).toBe(true);
      for (const file of files) expect(project.exists(file)).toBe(false);
      await resumed.close();
    }
  });

  it('one writer per session: a second live process is refused; a dead one’s lock is reclaimed', async () => {
    const project = tempProject();
    const manager = await project.open();
    await manager.checkpoint(newId());
    await manager.close();

    const holder = runWorker({ options: { cwd: project.root, storeDir: project.store, resume: manager.sessionId }, steps: [{ do: 'signal', text: 'holding' }, { do: 'hang' }] });
    await holder.waitFor((line) => line.signal === 'holding');
    await expect(project.open({ resume: manager.sessionId })).rejects.toMatchObject({
      code: 'SESSION_LOCKED',
      message: expect.stringContaining(`process ${holder.child.pid}`),
    });
    holder.child.kill('SIGKILL');
    await holder.done;

    const reclaimed = await project.open({ resume: manager.sessionId });
    expect((await reclaimed.listCheckpoints()).length).toBe(1);
  });

  it('different sessions of the same project work side by side', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    project.write('b.txt', 'b\n');
    const one = await project.open();
    const two = await project.open();
    const turnOne = await one.checkpoint(newId());
    const turnTwo = await two.checkpoint(newId());
    await one.trackEdit('a.txt');
    await two.trackEdit('b.txt');
    project.write('a.txt', 'a by one\n');
    project.write('b.txt', 'b by two\n');
    await one.rewindFiles(turnOne);
    expect(project.read('a.txt').toString()).toBe('a\n');
    expect(project.read('b.txt').toString()).toBe('b by two\n');
    await two.rewindFiles(turnTwo);
    expect(project.read('b.txt').toString()).toBe('b\n');
  });
});

describe('two projects whose paths encode to the same store key', () => {
  it('a session id taken by the other project is refused with SESSION_EXISTS naming that project, and its session is untouched', async () => {
    const project = tempProject();
    const first = path.join(project.outside, 'my-app');
    const second = path.join(project.outside, 'my.app');
    for (const directory of [first, second]) fs.mkdirSync(directory);
    fs.writeFileSync(path.join(first, 'a.txt'), 'a\n');
    const sessionId = newId();
    const owner = await CheckpointManager.open({ cwd: first, storeDir: project.store, sessionId });
    const turn = await owner.checkpoint(newId());
    await owner.trackEdit('a.txt');
    await owner.close();

    const refused = await CheckpointManager.open({ cwd: second, storeDir: project.store, sessionId }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'SESSION_EXISTS', details: { cwd: first }, message: expect.stringContaining(`for another project, ${first}, whose path encodes to the same store key`) });
    const resumed = await CheckpointManager.open({ cwd: first, storeDir: project.store, resume: sessionId });
    expect(await resumed.hasCheckpoint(turn)).toBe(true);
    await resumed.close();
  });
});
