import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PinnedDirectory } from '../../src/fs/pinned-directory.js';
import { jobsDoneOffMainThread, ReplaceMany, startWorkers, type ReplaceJob, type ReplaceResult } from '../../src/fs/replace-many.js';
import { lineStats, type LineStats } from '../../src/text/line-stats.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * The file writes of a rewind, run side by side: on worker threads for a
 * large batch, right here for a small one. Each write must still be checked
 * just before it is made (a link, a second hard link, a FIFO, a changed file
 * or a moved directory is refused, never written through), whichever thread
 * makes it, and the results must be the same either way.
 */

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
const linux = process.platform === 'linux';
/** A file's stat signature, as the library spells it. */
const signatureOf = (file: string) => {
  const stat = fs.lstatSync(file, { bigint: true });
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.mode}:${stat.mtimeNs}:${stat.ctimeNs}`;
};
/** The content every case expects to find, with the mode it expects (whatever the umask). */
const writeOld = (file: string) => {
  fs.writeFileSync(file, 'old\n');
  fs.chmodSync(file, 0o644);
};
/** `writeOld`, last modified a minute ago: its stat signature is trusted without reading it. */
const writeOldTrusted = (file: string) => {
  writeOld(file);
  fs.utimesSync(file, Date.now() / 1000 - 60, Date.now() / 1000 - 60);
};

interface Case {
  name: string;
  prepare: (file: string) => void;
  expected: (file: string) => ReplaceJob['expected'];
  result: ReplaceResult['status'] | `refused:${string}`;
}

/** One job per case, then plain files up to `count` jobs in all, spread over directories of 25. */
function scenario(project: TempProject, count: number) {
  const cases: Case[] = [
    { name: 'plain', prepare: writeOld, expected: () => ({ kind: 'file', sha256: sha256('old\n'), mode: 0o644 }), result: 'written' },
    { name: 'new', prepare: () => {}, expected: () => ({ kind: 'absent' }), result: 'written' },
    { name: 'changed', prepare: (file) => fs.writeFileSync(file, 'changed by someone\n'), expected: () => ({ kind: 'file', sha256: sha256('old\n'), mode: 0o644 }), result: 'refused:changed-during-rewind' },
    { name: 'mode-changed', prepare: (file) => fs.writeFileSync(file, 'old\n', { mode: 0o600 }), expected: () => ({ kind: 'file', sha256: sha256('old\n'), mode: 0o644 }), result: 'refused:changed-during-rewind' },
    { name: 'appeared', prepare: writeOld, expected: () => ({ kind: 'absent' }), result: 'refused:changed-during-rewind' },
    { name: 'gone', prepare: () => {}, expected: () => ({ kind: 'file', sha256: sha256('old\n'), mode: 0o644 }), result: 'refused:changed-during-rewind' },
    {
      name: 'link',
      prepare: (file) => fs.symlinkSync(path.join(project.outside, 'canary.txt'), file),
      expected: () => ({ kind: 'file', sha256: sha256('old\n'), mode: 0o644 }),
      result: 'refused:symlink',
    },
    {
      name: 'hard-link',
      prepare: (file) => {
        writeOld(file);
        fs.linkSync(file, path.join(project.outside, `second-${path.basename(file)}`));
      },
      expected: () => ({ kind: 'file', sha256: sha256('old\n'), mode: 0o644 }),
      result: 'refused:hard-link',
    },
    { name: 'fifo', prepare: (file) => execFileSync('mkfifo', [file]), expected: () => ({ kind: 'absent' }), result: 'refused:not-regular' },
    {
      name: 'trusted',
      prepare: writeOldTrusted,
      // A signature the racy rule trusts proves the file without reading it.
      expected: (file) => ({ kind: 'file', sha256: 'not read when the signature matches', mode: 0o644, trustedSignature: signatureOf(file) }),
      result: 'written',
    },
  ];
  fs.writeFileSync(path.join(project.outside, 'canary.txt'), 'canary\n');
  const jobs: Array<{ file: string; job: Omit<ReplaceJob, 'directoryHandle' | 'directoryPath'>; case: Case }> = [];
  for (let index = 0; index < count; index += 1) {
    const which = cases[index] ?? cases[0]!;
    const file = path.join(project.root, `d${Math.floor(index / 25)}`, `${which.name}-${index}.txt`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    which.prepare(file);
    const bytes = Buffer.from(`new content of ${index}\n`);
    jobs.push({ file, case: which, job: { name: path.basename(file), expected: which.expected(file), bytes, mode: 0o644, durable: index % 2 === 0, maxBytes: 1 << 20 } });
  }
  return { jobs, cases };
}

async function runAll(project: TempProject, count: number, movedDirectory?: string) {
  const { jobs } = scenario(project, count);
  const directories = new Map<string, PinnedDirectory>();
  const pinned = (directory: string) => {
    let found = directories.get(directory);
    if (found === undefined) {
      const opened = PinnedDirectory.open(directory);
      if (typeof opened === 'string') throw new Error(`cannot pin ${directory}: ${opened}`);
      directories.set(directory, (found = opened));
    }
    return found;
  };
  for (const { file } of jobs) pinned(path.dirname(file));
  // After pinning, before the writes: a directory moved elsewhere is refused for every file in it.
  if (movedDirectory !== undefined) fs.renameSync(path.join(project.root, movedDirectory), path.join(project.outside, movedDirectory));
  const replacements = new ReplaceMany(jobs.length);
  for (const { file, job } of jobs) {
    const directory = pinned(path.dirname(file));
    await replacements.add({ ...job, directoryHandle: directory.handlePath()!, directoryPath: directory.path });
  }
  const results = await replacements.finish();
  for (const directory of directories.values()) directory.close();
  return { jobs, results };
}

const outcome = (result: ReplaceResult) => (result.status === 'refused' ? `refused:${result.reason}` : result.status);

describe.runIf(linux)('ReplaceMany', () => {
  // Running already, as after a process's first rewind: batches from 32 jobs go to them (8 for removals).
  beforeAll(startWorkers);

  for (const count of [200, 10]) {
    it(`checks and writes each of ${count} files on its own (${count >= 32 ? 'worker threads' : 'this thread'})`, async () => {
      const project = tempProject();
      const doneOnWorkers = jobsDoneOffMainThread();
      const { jobs, results } = await runAll(project, count);
      expect(results.map(outcome)).toEqual(jobs.map(({ case: which }) => which.result));
      // A large batch really left this thread; a small one never did.
      if (count >= 32) expect(jobsDoneOffMainThread()).toBeGreaterThan(doneOnWorkers);
      else expect(jobsDoneOffMainThread()).toBe(doneOnWorkers);
      for (const [index, { file, job }] of jobs.entries()) {
        const result = results[index]!;
        if (result.status === 'written') {
          expect(fs.readFileSync(file, 'utf8')).toBe(job.bytes.toString());
          const stat = fs.lstatSync(file, { bigint: true });
          expect(stat.mode & 0o7777n).toBe(0o644n);
          // The signature of what was written, for the next check to trust.
          expect(result.signature).toBe(signatureOf(file));
        }
      }
      // Refused entries are untouched: nothing written through the link, the hard link or the FIFO.
      expect(fs.readFileSync(path.join(project.outside, 'canary.txt'), 'utf8')).toBe('canary\n');
      for (const [index, { file, case: which }] of jobs.entries()) {
        if (which.name === 'changed') expect(fs.readFileSync(file, 'utf8')).toBe('changed by someone\n');
        if (which.name === 'hard-link') expect(fs.readFileSync(path.join(project.outside, `second-${path.basename(file)}`), 'utf8')).toBe('old\n');
        if (which.name === 'gone') expect(fs.existsSync(file), `${index}`).toBe(false);
      }
      // No temporary file is left anywhere.
      expect(execFileSync('find', [project.root, '-name', '*.rewindable-tmp']).toString()).toBe('');
    });
  }

  for (const count of [40, 5]) {
    it(`removes each of ${count} files only while it is what was seen (${count >= 8 ? 'worker threads' : 'this thread'})`, async () => {
      const project = tempProject();
      const old = { kind: 'file', sha256: sha256('old\n'), mode: 0o644 } as const;
      const cases: Array<{ name: string; prepare: (file: string) => void; expected: (file: string) => ReplaceJob['expected']; result: string; after: (file: string) => void }> = [
        { name: 'plain', prepare: writeOld, expected: () => old, result: 'removed', after: (file) => expect(fs.existsSync(file)).toBe(false) },
        { name: 'changed', prepare: (file) => fs.writeFileSync(file, 'changed by someone\n'), expected: () => old, result: 'refused:changed-during-rewind', after: (file) => expect(fs.readFileSync(file, 'utf8')).toBe('changed by someone\n') },
        { name: 'gone', prepare: () => {}, expected: () => old, result: 'refused:changed-during-rewind', after: (file) => expect(fs.existsSync(file)).toBe(false) },
        {
          name: 'link',
          prepare: (file) => fs.symlinkSync(path.join(project.outside, 'canary.txt'), file),
          expected: () => old,
          result: 'refused:symlink',
          after: (file) => expect(fs.lstatSync(file).isSymbolicLink()).toBe(true),
        },
        {
          name: 'hard-link',
          prepare: (file) => {
            writeOld(file);
            fs.linkSync(file, path.join(project.outside, `second-${path.basename(file)}`));
          },
          expected: () => old,
          result: 'refused:hard-link',
          after: (file) => expect(fs.readFileSync(file, 'utf8')).toBe('old\n'),
        },
        { name: 'fifo', prepare: (file) => execFileSync('mkfifo', [file]), expected: () => old, result: 'refused:not-regular', after: (file) => expect(fs.lstatSync(file).isFIFO()).toBe(true) },
        {
          name: 'trusted',
          prepare: writeOldTrusted,
          expected: (file) => ({ ...old, sha256: 'not read when the signature matches', trustedSignature: signatureOf(file) }),
          result: 'removed',
          after: (file) => expect(fs.existsSync(file)).toBe(false),
        },
      ];
      fs.writeFileSync(path.join(project.outside, 'canary.txt'), 'canary\n');
      const directory = path.join(project.root, 'd');
      fs.mkdirSync(directory);
      const files = Array.from({ length: count }, (_, index) => ({ file: path.join(directory, `${(cases[index] ?? cases[0]!).name}-${index}.txt`), which: cases[index] ?? cases[0]! }));
      for (const { file, which } of files) which.prepare(file);
      const pinned = PinnedDirectory.open(directory) as PinnedDirectory;
      const doneOnWorkers = jobsDoneOffMainThread();
      const removals = new ReplaceMany(count, 'removals');
      for (const { file, which } of files) {
        await removals.add({ directoryHandle: pinned.handlePath()!, directoryPath: directory, name: path.basename(file), expected: which.expected(file), bytes: new Uint8Array(0), mode: 0, remove: true, durable: false, maxBytes: 1 << 20 });
      }
      const results = await removals.finish();
      pinned.close();
      expect(results.map(outcome)).toEqual(files.map(({ which }) => which.result));
      expect(jobsDoneOffMainThread() - doneOnWorkers).toBe(count >= 8 ? count : 0);
      for (const { file, which } of files) which.after(file);
      expect(fs.readFileSync(path.join(project.outside, 'canary.txt'), 'utf8')).toBe('canary\n');
    });
  }

  it('refuses every file of a directory moved after it was pinned, and writes nothing into it', async () => {
    const project = tempProject();
    const { jobs, results } = await runAll(project, 200, 'd3');
    for (const [index, { file }] of jobs.entries()) {
      if (path.basename(path.dirname(file)) === 'd3') expect(results[index]).toEqual({ status: 'refused', reason: 'parent-changed' });
    }
    const moved = fs.readdirSync(path.join(project.outside, 'd3'));
    expect(moved.length).toBe(25);
    for (const name of moved) expect(fs.readFileSync(path.join(project.outside, 'd3', name), 'utf8')).toBe('old\n');
  });

  it('writes exactly the bytes of each view when the jobs share one larger buffer (as members of a bundle do)', async () => {
    const project = tempProject();
    const directory = path.join(project.root, 'd');
    fs.mkdirSync(directory);
    const pinned = PinnedDirectory.open(directory) as PinnedDirectory;
    const whole = Buffer.from(Array.from({ length: 120 }, (_, index) => `line ${index} `.repeat(index % 7)).join('\n'));
    const copy = Buffer.from(whole);
    // Views of uneven lengths at uneven offsets, an empty one among them, and two that overlap.
    const views = Array.from({ length: 120 }, (_, index) => whole.subarray((index * 37) % 900, (index * 37) % 900 + (index % 11 === 0 ? 0 : 13 + index * 5)));
    const replacements = new ReplaceMany(views.length);
    for (const [index, bytes] of views.entries()) {
      await replacements.add({ directoryHandle: pinned.handlePath()!, directoryPath: directory, name: `f${index}.txt`, expected: { kind: 'absent' }, bytes, mode: 0o640, durable: false, maxBytes: 1 << 20 });
    }
    const results = await replacements.finish();
    pinned.close();
    expect(results.every((result) => result.status === 'written')).toBe(true);
    for (const [index, bytes] of views.entries()) expect(fs.readFileSync(path.join(directory, `f${index}.txt`)).equals(bytes)).toBe(true);
    // The caller's buffer is left as it was: the bytes sent were a copy.
    expect(whole.equals(copy)).toBe(true);
  });


  it('answers each job with its own result, and writes each round its own bytes, when files too large for a worker are mixed in and rounds follow one another', async () => {
    const project = tempProject();
    const directory = path.join(project.root, 'd');
    fs.mkdirSync(directory);
    const pinned = PinnedDirectory.open(directory) as PinnedDirectory;
    // Files over 256 KiB are written on this thread, between jobs batched for the workers; batches of every size go
    // through the workers, round after round, in buffers reused once a batch is answered.
    const sizes = Array.from({ length: 300 }, (_, index) => [10 * 1024, 1, 300 * 1024, 256 * 1024, 0, 40 * 1024][index % 6]!);
    for (const round of [1, 2, 3]) {
      const contents = sizes.map((size, index) => Buffer.alloc(size, `round ${round} file ${index};`));
      const doneOnWorkers = jobsDoneOffMainThread();
      const replacements = new ReplaceMany(contents.length);
      for (const [index, bytes] of contents.entries()) {
        const file = path.join(directory, `f${index}.txt`);
        const expected: ReplaceJob['expected'] = round === 1 ? { kind: 'absent' } : { kind: 'file', sha256: sha256(fs.readFileSync(file)), mode: 0o640 };
        await replacements.add({ directoryHandle: pinned.handlePath()!, directoryPath: directory, name: `f${index}.txt`, expected, bytes, mode: 0o640, durable: false, maxBytes: 1 << 20 });
      }
      const results = await replacements.finish();
      expect(results.filter((result) => result.status !== 'written')).toEqual([]);
      expect(jobsDoneOffMainThread()).toBeGreaterThan(doneOnWorkers + 200);
      for (const [index, bytes] of contents.entries()) {
        const file = path.join(directory, `f${index}.txt`);
        expect(fs.readFileSync(file).equals(bytes), `round ${round}, file ${index}`).toBe(true);
        // The result at each index is that job's: the signature of its own file.
        expect((results[index] as { signature?: string }).signature, `round ${round}, file ${index}`).toBe(signatureOf(file));
      }
    }
    pinned.close();
  });

  for (const count of [120, 6]) {
    it(`counts the lines each job changed against the bytes it replaced or removed, when asked, checked like any (${count} jobs, ${count >= 32 ? 'worker threads' : 'this thread'})`, async () => {
      const project = tempProject();
      const directory = path.join(project.root, 'd');
      fs.mkdirSync(directory);
      const pinned = PinnedDirectory.open(directory) as PinnedDirectory;
      const before = (index: number) => Buffer.from(`line ${index}\n`.repeat(index % 5) + (index % 4 === 0 ? 'no final newline' : ''));
      const files = Array.from({ length: count }, (_, index) => {
        const name = `f${index}.txt`;
        const file = path.join(directory, name);
        const kind = index === 1 ? 'changed' : index === 2 ? 'trusted' : index === 3 ? 'removed' : index === 4 ? 'not-asked' : 'plain';
        fs.writeFileSync(file, before(index));
        fs.chmodSync(file, 0o644);
        if (kind === 'trusted') fs.utimesSync(file, Date.now() / 1000 - 60, Date.now() / 1000 - 60);
        const expected = { kind: 'file', sha256: sha256(before(index)), mode: 0o644, ...(kind === 'trusted' ? { trustedSignature: signatureOf(file) } : {}) } as const;
        if (kind === 'changed') fs.writeFileSync(file, 'changed by someone\n');
        return { name, kind, expected };
      });
      const doneOnWorkers = jobsDoneOffMainThread();
      const replacements = new ReplaceMany(count);
      const seen = new Map<number, ReplaceResult>();
      const withCallback = new ReplaceMany(count, 'writes', (index, result) => seen.set(index, result));
      for (const [index, { name, kind, expected }] of files.entries()) {
        const job = { directoryHandle: pinned.handlePath()!, directoryPath: directory, name, expected, bytes: Buffer.from(`new ${index}\n`), mode: 0o644, durable: false, maxBytes: 1 << 20 };
        const asked = kind === 'not-asked' ? job : { ...job, countLines: true };
        await (index % 2 === 0 ? replacements : withCallback).add(kind === 'removed' ? { ...asked, bytes: new Uint8Array(0), remove: true } : asked);
      }
      const [even, odd] = [await replacements.finish(), await withCallback.finish()];
      pinned.close();
      expect(jobsDoneOffMainThread() - doneOnWorkers).toBe(count >= 32 ? count : 0);
      const results = files.map((_, index) => (index % 2 === 0 ? even[index / 2] : odd[(index - 1) / 2])!);
      for (const [index, { kind }] of files.entries()) {
        const result = results[index]!;
        if (kind === 'changed') expect(result).toEqual({ status: 'refused', reason: 'changed-during-rewind' });
        else if (kind === 'not-asked') expect((result as { stats?: LineStats }).stats).toBeUndefined();
        else {
          expect(result.status, kind).toBe(kind === 'removed' ? 'removed' : 'written');
          // Counted against exactly the old bytes, even where the signature vouched for the file and the check would not read it.
          const expected = lineStats(before(index), kind === 'removed' ? undefined : Buffer.from(`new ${index}\n`));
          expect((result as { stats?: LineStats }).stats, `${index}`).toEqual(expected);
        }
      }
      // The callback saw each result as `finish` reports it, by the index of its job.
      expect([...seen.keys()].sort((a, b) => a - b)).toEqual(odd.map((_, index) => index));
      for (const [index, result] of odd.entries()) expect(seen.get(index)).toEqual(result);
    });
  }

  it('after a failed write starts no further job: each file is then whole, old or new', async () => {
    const project = tempProject();
    const directory = path.join(project.root, 'd');
    fs.mkdirSync(directory);
    const pinned = PinnedDirectory.open(directory) as PinnedDirectory;
    const replacements = new ReplaceMany(300);
    const names = Array.from({ length: 300 }, (_, index) => (index === 40 ? 'missing-directory/file.txt' : `f${index}.txt`));
    for (const name of names) {
      if (!name.includes('/')) writeOld(path.join(directory, name));
      await replacements.add({
        directoryHandle: pinned.handlePath()!,
        directoryPath: directory,
        name,
        expected: name.includes('/') ? { kind: 'absent' } : { kind: 'file', sha256: sha256('old\n'), mode: 0o644 },
        bytes: Buffer.from('new\n'),
        mode: 0o644,
        durable: false,
        maxBytes: 1 << 20,
      });
    }
    const results = await replacements.finish();
    pinned.close();
    expect(results[40]).toMatchObject({ status: 'failed', error: { code: 'ENOENT' } });
    expect(replacements.stopped).toBe(true);
    expect(results.filter((result) => result.status === 'not-started').length).toBeGreaterThan(0);
    for (const [index, name] of names.entries()) {
      if (index === 40) continue;
      const status = results[index]!.status;
      expect(['written', 'not-started']).toContain(status);
      expect(fs.readFileSync(path.join(directory, name), 'utf8')).toBe(status === 'written' ? 'new\n' : 'old\n');
    }
    expect(fs.readdirSync(directory).filter((name) => name.endsWith('.rewindable-tmp'))).toEqual([]);
  });
});

describe('a rewind of many files', () => {
  for (const count of [300, 12]) {
    it(`counts exact line statistics when the store already holds the current bytes (${count} files, read only by the write's own check)`, async () => {
      const project = tempProject();
      const files = Array.from({ length: count }, (_, index) => project.write(`src/m${index % 8}/f${index}.ts`, `export const value${index} = ${index};\n`));
      const manager = await project.open();
      const first = await manager.checkpoint(newId());
      for (const [index, file] of files.entries()) {
        await manager.trackEdit(file);
        if (index % 10 === 9) {
          fs.rmSync(file);
          await manager.recordWrite(file, { tool: 'Bash' });
          continue;
        }
        // Written and reported by a tool a moment ago: its content is stored, and its timestamps too fresh to vouch for it.
        const content = `export const value${index} = ${index};\n` + `// added ${index}\n`.repeat((index % 3) + 1);
        fs.writeFileSync(file, content);
        await manager.recordWrite(file, { tool: 'Write', content: Buffer.from(content) });
      }
      await manager.checkpoint(newId());
      const result = await manager.rewindFiles(first);
      expect(result.files?.map((file) => [path.relative(project.root, file.path), file.action, file.insertions, file.deletions])).toEqual(
        files
          .map((file, index) => [path.relative(project.root, file), index % 10 === 9 ? 'recreate' : 'restore', index % 10 === 9 ? 1 : 0, index % 10 === 9 ? 0 : (index % 3) + 1] as const)
          .sort((a, b) => (a[0] < b[0] ? -1 : 1)),
      );
      for (const [index, file] of files.entries()) expect(fs.readFileSync(file, 'utf8')).toBe(`export const value${index} = ${index};\n`);
      // Back again: the files the rewind wrote are counted the other way round.
      const back = await manager.rewindFiles(result.undoCheckpointId!);
      expect([back.insertions, back.deletions]).toEqual([result.deletions, result.insertions]);
      await manager.close();
    });
  }


  it('lists every file it wrote when files over 256 KiB, written on this thread, are mixed with batched ones (300 files)', async () => {
    const project = tempProject();
    const contentOf = (index: number, version: string) => (index % 5 === 0 ? `${version} ${index}\n`.repeat(30_000) : `${version} ${index}\n`);
    const files = Array.from({ length: 300 }, (_, index) => project.write(`src/m${index % 8}/f${index}.ts`, contentOf(index, 'first')));
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    for (const [index, file] of files.entries()) {
      await manager.trackEdit(file);
      fs.writeFileSync(file, contentOf(index, 'second'));
    }
    await manager.checkpoint(newId());
    const result = await manager.rewindFiles(first);
    expect(result.filesChanged?.length).toBe(300);
    expect(new Set(result.filesChanged)).toEqual(new Set(files));
    for (const [index, file] of files.entries()) expect(fs.readFileSync(file, 'utf8')).toBe(contentOf(index, 'first'));
    await manager.close();
  });

  it('restores 400 files exactly (bytes and modes), and its undo puts them back', async () => {
    const project = tempProject();
    const files = Array.from({ length: 400 }, (_, index) => project.write(`src/m${index % 16}/f${index}.ts`, `export const value${index} = ${index};\n`));
    const original = project.snapshot();
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    for (const [index, file] of files.entries()) {
      await manager.trackEdit(file);
      if (index % 7 === 0) fs.rmSync(file);
      else {
        fs.writeFileSync(file, `export const value${index} = ${index * 2}; // changed\n`);
        if (index % 5 === 0) fs.chmodSync(file, 0o755);
      }
    }
    for (let index = 0; index < 20; index += 1) {
      const created = path.join(project.root, `new/n${index}.ts`);
      await manager.trackEdit(created);
      project.write(`new/n${index}.ts`, `new ${index}\n`);
    }
    await manager.checkpoint(newId());
    const changed = project.snapshot();
    const result = await manager.rewindFiles(first);
    expect(result.canRewind).toBe(true);
    expect(result.filesChanged?.length).toBe(420);
    // The directory the agent's first file in it needed goes too, once its files are deleted.
    expect(result.directoriesRemoved).toEqual([path.join(project.root, 'new')]);
    expect(project.snapshot()).toEqual(original);
    await manager.rewindFiles(result.undoCheckpointId!);
    expect(project.snapshot()).toEqual(changed);
    await manager.close();
  });
});
