import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey, filesystemStorage, RewindableError } from '../../src/index.js';
import { parseLog } from '../../src/store/filesystem/log-lines.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * Log fuzzing. A session log cut at every byte reopens to an exact prefix of
 * its records; a flipped bit anywhere before the last line is reported as
 * LOG_CORRUPT, never silently accepted; a flipped bit in the last line drops
 * that line and nothing else.
 */

let sandbox: Sandbox;
let sessionId: string;
let log: Buffer;
/** Byte offset just past each line's newline. */
let lineEnds: number[];
let records: Array<Record<string, unknown>>;

beforeAll(async () => {
  sandbox = createSandbox();
  sandbox.writeFiles({ 'a.txt': 'alpha\n', 'b.bin': '\u0000\u0001\u00fe' });
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
  sessionId = manager.sessionId;
  const first = await manager.checkpoint();
  await manager.trackEdit('a.txt');
  await manager.trackEdit('b.bin');
  await manager.trackEdit('c.txt');
  sandbox.writeFiles({ 'a.txt': 'alpha 2\n', 'c.txt': 'created\n' });
  await manager.recordWrite('a.txt', { tool: 'Write' });
  await manager.checkpoint();
  await manager.rewindFiles(first);
  await manager.close();
  log = fs.readFileSync(sandbox.logPath(sessionId));
  lineEnds = [];
  log.forEach((byte, index) => byte === 0x0a && lineEnds.push(index + 1));
  records = log
    .toString('utf8')
    .split('\n')
    .slice(0, -1)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lineEnds.length).toBeGreaterThan(8);
  expect(lineEnds.at(-1)).toBe(log.length);
  return () => sandbox.dispose();
});

/**
 * The entries the store hands back for `bytes` as the log, or the error it
 * throws. The exhaustive loops parse in memory (tens of thousands of cases);
 * `throughStore` goes through the filesystem storage, to check they agree.
 */
async function loadEntries(bytes: Buffer, throughStore = false): Promise<{ entries?: unknown[]; error?: unknown }> {
  if (!throughStore) {
    try {
      return { entries: parseLog(bytes, 'the fuzzed log').entries.map((entry) => ({ ...entry })) };
    } catch (error) {
      return { error };
    }
  }
  fs.writeFileSync(sandbox.logPath(sessionId), bytes);
  const storage = filesystemStorage({ directory: sandbox.store });
  try {
    const loaded = await storage.load({ projectKey: encodeProjectKey(sandbox.root), sessionId });
    return { entries: (loaded ?? []).map((entry) => ({ ...entry })) };
  } catch (error) {
    return { error };
  } finally {
    await storage.close();
  }
}

/** The records as written, without the line checksum (which the store strips). */
const expectedEntries = () => records.map(({ crc: _crc, ...rest }) => rest);

describe('log fuzzing', () => {
  it('a log cut at any byte loads as the exact prefix of its whole lines', async () => {
    const all = expectedEntries();
    for (let cut = 0; cut <= log.length; cut += 1) {
      const whole = lineEnds.filter((end) => end <= cut).length;
      const { entries, error } = await loadEntries(log.subarray(0, cut), cut % 97 === 0);
      expect(error, `cut at byte ${cut}`).toBeUndefined();
      expect(entries, `cut at byte ${cut}`).toEqual(all.slice(0, whole));
    }
  });

  it('a session whose log is cut at any line boundary, or one byte either side, reopens with the checkpoints of that prefix', async () => {
    const cuts = new Set(lineEnds.flatMap((end) => [end - 1, end, end + 1]).filter((cut) => cut > lineEnds[0]! && cut <= log.length));
    for (const cut of cuts) {
      fs.writeFileSync(sandbox.logPath(sessionId), log.subarray(0, cut));
      const whole = records.slice(0, lineEnds.filter((end) => end <= cut).length);
      const expected = whole.filter((record) => record.type === 'checkpoint').map((record) => record.id);
      // Read-only: no lock, no recovery, nothing written, so every cut sees the same files.
      const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId, readOnly: true });
      expect((await manager.listCheckpoints()).map((checkpoint) => checkpoint.id), `cut at byte ${cut}`).toEqual(expected);
      await manager.close();
    }
  });

  it('every flipped bit before the last line is LOG_CORRUPT; in the last line it drops only that line', async () => {
    const all = expectedEntries();
    const lastLineStart = lineEnds.at(-2)!;
    let reported = 0;
    let dropped = 0;
    for (let position = 0; position < log.length; position += 1) {
      for (let bit = 0; bit < 8; bit += 1) {
        const damaged = Buffer.from(log);
        damaged[position]! ^= 1 << bit;
        const { entries, error } = await loadEntries(damaged, (position * 8 + bit) % 499 === 0);
        const context = `bit ${bit} of byte ${position} (${JSON.stringify(String.fromCharCode(log[position]!))} in line ${lineEnds.filter((end) => end <= position).length + 1})`;
        if (position < lastLineStart) {
          expect(RewindableError.isInstance(error) && error.code, `${context}: ${JSON.stringify(entries?.length)} entries`).toBe('LOG_CORRUPT');
          reported += 1;
        } else if (damaged[position] === 0x0a && error !== undefined) {
          // The flip made a newline inside the last line: its first half is damage before the last line.
          expect(RewindableError.isInstance(error) && error.code, context).toBe('LOG_CORRUPT');
          reported += 1;
        } else {
          expect(error, context).toBeUndefined();
          expect(entries, context).toEqual(all.slice(0, -1));
          dropped += 1;
        }
      }
    }
    expect(reported + dropped).toBe(log.length * 8);
    console.info(`log fuzzing: ${log.length} bytes, ${reported} flips reported as LOG_CORRUPT, ${dropped} flips in the last line dropped it`);
  });

  it('a log cut before its first whole line is a session that never started: resume finds nothing, and the id can start it', async () => {
    for (const cut of [0, 1, lineEnds[0]! - 1]) {
      fs.writeFileSync(sandbox.logPath(sessionId), log.subarray(0, cut));
      await expect(CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId }), `cut at byte ${cut}`).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
      const started = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, sessionId });
      await started.checkpoint();
      await started.close();
      // Started afresh: it has its header, so it is listed and checked against its project.
      expect(JSON.parse(fs.readFileSync(sandbox.logPath(sessionId), 'utf8').split('\n')[0]!)).toMatchObject({ type: 'session-start', sessionId, cwd: sandbox.root });
    }
    fs.writeFileSync(sandbox.logPath(sessionId), log);
  });
});
