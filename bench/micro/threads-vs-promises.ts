/**
 * Are worker threads worth it for a rewind's file work? Replaces 1,000 files
 * of about 2 KB (check the expected hash, write a temporary file, fchmod,
 * rename) and lstats 20,000 and 100,000 paths, each way in turn, on real
 * directories on this disk: the plain synchronous loop, `ReplaceMany` on its
 * worker threads, `glanceMany` (the same loop, on two worker threads from
 * 8,192 paths), and a bounded promise pool over `fs.promises`. Rounds alternate the ways;
 * medians and ranges are printed.
 *
 *   npx tsx bench/micro/threads-vs-promises.ts [rounds]
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { glanceMany } from '../../src/fs/glance-many.js';
import { lstatFields } from '../../src/fs/lstat-fields.js';
import { PinnedDirectory } from '../../src/fs/pinned-directory.js';
import { ReplaceMany, startWorkers, type ReplaceJob } from '../../src/fs/replace-many.js';
import { temporaryName } from '../../src/fs/atomic-write.js';
import { mapConcurrently } from '../../src/util/concurrency.js';

const rounds = Number(process.argv[2] ?? 5);
const base = fs.mkdtempSync(path.join(process.env.BENCH_DIRECTORY ?? os.tmpdir(), 'threads-vs-promises-'));
const oldBytes = Buffer.alloc(2048, 'old content\n');
const oldHash = crypto.createHash('sha256').update(oldBytes).digest('hex');

interface Tree {
  root: string;
  directories: PinnedDirectory[];
  jobs: ReplaceJob[];
}

/** 1,000 files of 2 KB in directories of 25, pinned, with the job that replaces each. */
function makeTree(name: string, durable: boolean): Tree {
  const root = path.join(base, name);
  const directories: PinnedDirectory[] = [];
  const jobs: ReplaceJob[] = [];
  for (let index = 0; index < 1000; index += 1) {
    const directoryPath = path.join(root, `d${Math.floor(index / 25)}`);
    if (index % 25 === 0) {
      fs.mkdirSync(directoryPath, { recursive: true });
      directories.push(PinnedDirectory.open(fs.realpathSync(directoryPath)) as PinnedDirectory);
    }
    const fileName = `f${index}.txt`;
    fs.writeFileSync(path.join(directoryPath, fileName), oldBytes, { mode: 0o644 });
    fs.chmodSync(path.join(directoryPath, fileName), 0o644);
    const directory = directories.at(-1)!;
    jobs.push({
      directoryHandle: directory.handlePath()!,
      directoryPath: directory.path,
      name: fileName,
      expected: { kind: 'file', sha256: oldHash, mode: 0o644 },
      bytes: Buffer.alloc(2100, `new ${index}\n`),
      mode: 0o644,
      durable,
      maxBytes: 1 << 20,
    });
  }
  return { root, directories, jobs };
}

function dropTree(tree: Tree): void {
  for (const directory of tree.directories) directory.close();
  fs.rmSync(tree.root, { recursive: true, force: true });
}

async function replaceWithReplaceMany(jobs: readonly ReplaceJob[], expected: number): Promise<void> {
  const replacements = new ReplaceMany(expected);
  for (const job of jobs) await replacements.add(job);
  const results = await replacements.finish();
  if (results.some((result) => result.status !== 'written')) throw new Error(`not all written: ${JSON.stringify(results.find((result) => result.status !== 'written'))}`);
}

/** The same job, step by step over `fs.promises`. */
async function replaceOneAsync(job: ReplaceJob): Promise<void> {
  if ((await fs.promises.readlink(job.directoryHandle)) !== job.directoryPath) throw new Error('parent-changed');
  const entry = `${job.directoryHandle}/${job.name}`;
  const stat = await fs.promises.lstat(entry, { bigint: true });
  if (!stat.isFile() || stat.nlink > 1n) throw new Error('refused');
  const reading = await fs.promises.open(entry, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const opened = await reading.stat({ bigint: true });
    if (opened.ino !== stat.ino || Number(opened.mode & 0o7777n) !== (job.expected as { mode: number }).mode) throw new Error('changed');
    const content = await reading.readFile();
    if (crypto.createHash('sha256').update(content).digest('hex') !== (job.expected as { sha256: string }).sha256) throw new Error('changed');
  } finally {
    await reading.close();
  }
  const temporary = `${job.directoryHandle}/${temporaryName(job.name)}`;
  const writing = await fs.promises.open(temporary, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
  try {
    await writing.write(job.bytes);
    await writing.chmod(job.mode);
    if (job.durable) await writing.sync();
  } finally {
    await writing.close();
  }
  await fs.promises.rename(temporary, entry);
  await fs.promises.lstat(entry, { bigint: true });
}

async function lstatPromisePool(paths: readonly string[], limit: number): Promise<void> {
  await mapConcurrently(paths, limit, (file) => fs.promises.lstat(file).catch(() => undefined));
}

/** glanceMany: on its two worker threads from `minimumForWorkers` paths on. */
async function lstatGlanceMany(paths: readonly string[]): Promise<void> {
  let files = 0;
  await glanceMany(paths, (_, kind) => (files += kind === 'file' ? 1 : 0));
  if (files !== paths.length) throw new Error(`lstat found ${files} of ${paths.length}`);
}

type Measure = () => Promise<number>;

async function measureAll(title: string, ways: Record<string, Measure>): Promise<void> {
  const times = new Map<string, number[]>(Object.keys(ways).map((name) => [name, []]));
  for (let round = 0; round < rounds; round += 1) {
    // Alternate: each round runs the ways in a different order.
    const names = Object.keys(ways);
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) times.get(name)!.push(await ways[name]!());
  }
  console.log(`\n${title}`);
  for (const [name, values] of times) {
    const sorted = [...values].sort((a, b) => a - b);
    console.log(`  ${name.padEnd(28)} median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1).padStart(7)} ms  range ${sorted[0]!.toFixed(1)}-${sorted.at(-1)!.toFixed(1)}`);
  }
}

function replaceWay(durable: boolean, run: (jobs: readonly ReplaceJob[]) => Promise<void>): Measure {
  return async () => {
    const tree = makeTree(`tree-${crypto.randomUUID()}`, durable);
    const started = performance.now();
    await run(tree.jobs);
    const elapsed = performance.now() - started;
    dropTree(tree);
    return elapsed;
  };
}

async function main(): Promise<void> {
  startWorkers();
  // Warm both: the workers boot and compile, and this thread's code is compiled too.
  for (const durable of [false, true]) {
    const warm = makeTree('warm-up', durable);
    await replaceWithReplaceMany(warm.jobs.slice(0, 400), 400);
    await replaceWithReplaceMany(warm.jobs.slice(400, 500), 1);
    await mapConcurrently(warm.jobs.slice(500), 8, replaceOneAsync);
    dropTree(warm);
  }
  for (const durable of [false, true]) {
    await measureAll(`Replace 1,000 files of 2 KB, durable ${durable}`, {
      'main thread, sync': replaceWay(durable, (jobs) => replaceWithReplaceMany(jobs, 1)),
      'workers (ReplaceMany)': replaceWay(durable, (jobs) => replaceWithReplaceMany(jobs, jobs.length)),
      'promise pool 4': replaceWay(durable, (jobs) => mapConcurrently(jobs, 4, replaceOneAsync).then(() => {})),
      'promise pool 8': replaceWay(durable, (jobs) => mapConcurrently(jobs, 8, replaceOneAsync).then(() => {})),
      'promise pool 16': replaceWay(durable, (jobs) => mapConcurrently(jobs, 16, replaceOneAsync).then(() => {})),
    });
  }

  const lstatRoot = path.join(base, 'lstat');
  const all: string[] = [];
  for (let index = 0; index < 100_000; index += 1) {
    const directory = path.join(lstatRoot, `d${Math.floor(index / 100)}`);
    if (index % 100 === 0) fs.mkdirSync(directory, { recursive: true });
    const file = path.join(directory, `f${index}.txt`);
    fs.writeFileSync(file, '');
    all.push(file);
  }
  for (const count of [20_000, 100_000]) {
    const paths = all.slice(0, count);
    const timed = (run: () => unknown): Measure => async () => {
      const started = performance.now();
      await run();
      return performance.now() - started;
    };
    await lstatGlanceMany(paths);
    await measureAll(`lstat ${count.toLocaleString('en-US')} paths`, {
      'sync loop': timed(() => lstatFields(paths)),
      'glanceMany': timed(() => lstatGlanceMany(paths)),
      'promise pool 4': timed(() => lstatPromisePool(paths, 4)),
      'promise pool 8': timed(() => lstatPromisePool(paths, 8)),
      'promise pool 16': timed(() => lstatPromisePool(paths, 16)),
    });
  }
}

try {
  await main();
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
