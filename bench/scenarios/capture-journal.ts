import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CheckpointReport } from '../children/capture-journal-session.js';
import { generateProject } from '../lib/generated-project.js';
import type { Figure, Row, ScenarioReport } from '../lib/results.js';
import type { Scenario, ScenarioContext } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { sourceFile } from '../lib/source-text.js';
import { rotate, shuffled } from '../lib/ordering.js';
import { sleep, stopwatch, summarize } from '../lib/timing.js';
import { editFirstLine } from '../lib/turn-edits.js';
import { copyTree, removeTree, settleDisk, settleProcesses, treeBytes } from '../lib/workspace.js';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const childScript = path.join(repositoryRoot, 'bench', 'children', 'capture-journal-session.ts');
/** Generated trees are kept here between runs: generating 500,000 files takes minutes. */
const cacheDirectory = path.join(repositoryRoot, '.bench-work', 'cache');
const defaultRealTree = path.join(repositoryRoot, 'node_modules', '@anthropic-ai', 'sdk');
/** Longer than the racy window on any filesystem (2 s at most): files must look old to every contender before a timed scan. */
const settleMs = 2100;
const averageBytes = 2000;
/**
 * How long the journal's session process has rested before each of its timed checkpoints, at every tree size.
 * Left to itself the rest grows with the tree, as the other contenders' turns do (0.3 s at 20,000 files, about
 * 5 s at 500,000), and the flatness row would compare a process that just worked with one woken after seconds,
 * whose caches others have used meanwhile. How much that moves the figure depends on what else the machine
 * runs: with a test suite running beside it, 13.5 ms rested against 6-7 ms unrested at 20,000 files; alone,
 * 7.25 ms rested against 6.0 ms unrested (two runs). An agent's checkpoints are seconds apart anyway: the model
 * answers in between.
 */
const journalRestMs = 5000;
const modifiedPerTurn = 8;
const contenders = ['git', 'full', 'journal'] as const;
type Contender = (typeof contenders)[number];

interface Tree {
  label: string;
  /** Files of a generated tree (undefined for the real tree). */
  files: number | undefined;
  describe: string;
  /** Generated, or taken from the cache, and how long generating it took. */
  origin: string;
  root: string;
  /** The original bytes of every file the turns changed (undefined: created by a turn). */
  changed: Map<string, Buffer | undefined>;
  /** Puts the tree back as it was before the turns' edits (a cached tree is reused by the next run). */
  restore(): void;
}

/**
 * The capture scope's journal (a file watcher recording what may have
 * changed since the last checkpoint) against the full scan it falls back
 * to and a shadow git repository, on generated trees of 20,000, 200,000 and
 * 500,000 files and on a real tree. All three contenders share one tree:
 * every turn's edits are seen by each, and nothing here rewinds.
 */
export const captureJournal: Scenario = {
  id: 'journal',
  summary: 'capture journal vs full scan vs shadow git: incremental checkpoints and first scan at 20,000, 200,000 and 500,000 files and a real tree',
  async run(context) {
    const sizes = context.quick ? [2000, 5000] : [20_000, 200_000, 500_000];
    const reports: ScenarioReport[] = [];
    const journalMedians = new Map<number, Figure>();
    for (const files of sizes) {
      const tree = generatedTree(context, files);
      const report = await runOnTree(context, tree, files === sizes.at(-1));
      journalMedians.set(files, report.journal);
      reports.push(report.report);
    }
    const realTree = context.realTree ?? defaultRealTree;
    if (!fs.existsSync(realTree)) throw new Error(`The real source tree ${realTree} does not exist: run npm ci, or pass --real-tree <directory>.`);
    const realRoot = path.join(context.workspace.directory('journal-real'), 'tree');
    copyTree(realTree, realRoot);
    reports.push(
      (
        await runOnTree(
          context,
          {
            label: `real tree (${path.basename(realTree)})`,
            files: undefined,
            describe: `a copy of the real source tree ${path.relative(repositoryRoot, realTree).startsWith('..') ? realTree : path.relative(repositoryRoot, realTree)}`,
            origin: 'copied for this run',
            root: realRoot,
            changed: new Map(),
            restore: () => removeTree(path.dirname(realRoot)),
          },
          false,
        )
      ).report,
    );
    const smallest = journalMedians.get(sizes[0]!)!;
    const largest = journalMedians.get(sizes.at(-1)!)!;
    reports.push({
      id: 'journal',
      title: 'Capture journal: does an incremental checkpoint stay flat as the project grows?',
      method: [
        `The journal's incremental checkpoint (${modifiedPerTurn + 2} changed files) on the largest generated tree against the same on the smallest, from the rows above.`,
        'A journaled checkpoint examines the paths the watcher reported and their directories, not the whole scope: its cost should follow what changed, not the project.',
      ],
      rows: [
        {
          label: `${sizes.at(-1)!.toLocaleString('en-US')} files against ${sizes[0]!.toLocaleString('en-US')}`,
          rewindable: { ...largest, name: `checkpoint() with the journal, ${sizes.at(-1)!.toLocaleString('en-US')} files` },
          baseline: { ...smallest, name: `checkpoint() with the journal, ${sizes[0]!.toLocaleString('en-US')} files` },
          target: { kind: 'ratio-at-most', value: 1.5 },
        },
      ],
    });
    return reports;
  },
};

/** A generated tree of `files` files from the cache, generated (and timed) on first use. */
function generatedTree(context: ScenarioContext, files: number): Tree {
  const root = path.join(cacheDirectory, `journal-${files}-${averageBytes}`);
  const complete = path.join(cacheDirectory, `journal-${files}-${averageBytes}.complete`);
  let origin: string;
  if (fs.existsSync(complete)) {
    origin = `generated once (${fs.readFileSync(complete, 'utf8').trim()}) and reused from .bench-work/cache`;
  } else {
    context.log(`journal: generating ${files.toLocaleString('en-US')} files (kept in .bench-work/cache for later runs)`);
    removeTree(root);
    const started = performance.now();
    generateProject(root, files, averageBytes, 11);
    fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\ndist/\n*.log\n');
    const seconds = (performance.now() - started) / 1000;
    fs.writeFileSync(complete, `${seconds.toFixed(0)} s to generate`);
    origin = `generated in ${seconds.toFixed(0)} s for this run and kept in .bench-work/cache`;
  }
  const changed = new Map<string, Buffer | undefined>();
  return {
    label: `generated, ${files.toLocaleString('en-US')} files`,
    files,
    describe: `a generated project of ${files.toLocaleString('en-US')} source-like files (${averageBytes.toLocaleString('en-US')} bytes on average) in directories of 25, plus a \`.gitignore\``,
    origin,
    root,
    changed,
    restore() {
      for (const [file, bytes] of changed) {
        if (bytes === undefined) fs.rmSync(path.join(root, file), { force: true });
        else fs.writeFileSync(path.join(root, file), bytes);
      }
    },
  };
}

interface TreeRun {
  report: ScenarioReport;
  journal: Figure;
}

async function runOnTree(context: ScenarioContext, tree: Tree, largest: boolean): Promise<TreeRun> {
  const directory = context.workspace.directory('journal', tree.label.replace(/[^a-z0-9]+/gi, '-'));
  const log = (message: string) => context.log(`journal (${tree.label}): ${message}`);
  const changed = tree.changed;
  const sessions: Partial<Record<'full' | 'journal', SessionProcess>> = {};
  try {
    const size = treeBytes(tree.root);
    await sleep(settleMs);

    // First scan: one round (at 500,000 files each contender's first checkpoint takes minutes), the order git, full, journal.
    log('first scan');
    const firstScan = {} as Record<Contender, number>;
    await settleDisk();
    const git = ShadowGit.init(path.join(directory, 'store-git'), tree.root);
    firstScan.git = await stopwatch(() => git.checkpoint('first'));
    const gitFiles = git.run(['ls-files', '-z']).split('\0').filter(Boolean).length;
    const firstReports = {} as Record<'full' | 'journal', CheckpointReport>;
    for (const mode of ['full', 'journal'] as const) {
      await settleDisk();
      await settleProcesses(otherSessions(sessions, mode));
      const session = await SessionProcess.start(tree.root, path.join(directory, `store-${mode}`), mode);
      sessions[mode] = session;
      firstReports[mode] = await session.checkpoint();
      session.lastActive = performance.now();
      firstScan[mode] = firstReports[mode].ms;
      if (firstReports[mode].scanned !== gitFiles) throw new Error(`${mode}: the capture scope holds ${firstReports[mode].scanned} files but git tracks ${gitFiles}: the scopes differ`);
    }
    await sleep(settleMs);

    // Turns: 8 files modified (one line), 1 created beside them, 1 deleted; each contender's checkpoint timed right after.
    const turns = context.quick ? 3 : largest ? 7 : 11;
    const incremental: Record<Contender, number[]> = { git: [], full: [], journal: [] };
    const fallbacks = new Map<string, number>();
    const editable = shuffled(listRelative(tree.root).filter((file) => /\.(ts|js|mjs|cjs|md|json)$/.test(file)), 7);
    let next = 0;
    for (let turn = 0; turn < turns; turn++) {
      log(`turn ${turn + 1}/${turns}`);
      const modified = editable.slice(next, next + modifiedPerTurn);
      const deleted = editable[next + modifiedPerTurn]!;
      next += modifiedPerTurn + 1;
      const created = path.posix.join(path.posix.dirname(modified[0]!), `added-in-turn-${turn}.ts`);
      for (const file of [...modified, deleted]) if (!changed.has(file)) changed.set(file, fs.readFileSync(path.join(tree.root, file)));
      if (!changed.has(created)) changed.set(created, undefined);
      for (const file of modified) editFirstLine(path.join(tree.root, file), `${turn}`);
      fs.rmSync(path.join(tree.root, deleted));
      fs.writeFileSync(path.join(tree.root, created), sourceFile(700_000 + turn, 3000));
      for (const contender of rotate(contenders, turn)) {
        await settleDisk();
        await settleProcesses(otherSessions(sessions, contender));
        if (contender === 'git') {
          incremental.git.push(await stopwatch(() => git.checkpoint(`turn ${turn}`)));
          continue;
        }
        const session = sessions[contender]!;
        if (contender === 'journal') await sleep(session.lastActive + journalRestMs - performance.now());
        const report = await session.checkpoint();
        session.lastActive = performance.now();
        incremental[contender].push(report.ms);
        if (report.modified !== modifiedPerTurn || report.created !== 1 || report.deleted !== 1) {
          throw new Error(`${contender}, turn ${turn}: the scan found ${report.modified} modified, ${report.created} created, ${report.deleted} deleted; expected ${modifiedPerTurn}, 1, 1`);
        }
        if (contender === 'journal' && report.via !== 'journal') {
          const reason = report.fullScanReason ?? 'no journal in this build';
          fallbacks.set(reason, (fallbacks.get(reason) ?? 0) + 1);
        }
      }
      log(`turn ${turn + 1}: ${rotate(contenders, turn).map((contender) => `${contender} ${incremental[contender].at(-1)!.toFixed(1)} ms`).join(', ')}`);
    }
    const closing = await Promise.all((['full', 'journal'] as const).map(async (mode) => [mode, await sessions[mode]!.close()] as const));
    const peaks = Object.fromEntries(closing) as Record<'full' | 'journal', number>;

    const timing = (values: number[], name: string): Figure => {
      const summary = summarize(values);
      return { name, value: summary.medianMs, unit: 'ms', samples: summary.samples };
    };
    const journal = timing(incremental.journal, 'checkpoint() with the journal');
    const gitIncremental = timing(incremental.git, 'git add -A + git commit');
    const files = tree.files;
    const rows: Row[] = [
      {
        label: `incremental, ${modifiedPerTurn + 2} changed files, journal`,
        rewindable: journal,
        baseline: gitIncremental,
        ...(files === 200_000 ? { target: { kind: 'faster-by-at-least', value: 20 } as const } : {}),
        ...(fallbacks.size > 0 ? { note: `${[...fallbacks].map(([reason, count]) => `${count} of ${turns} fell back (${reason})`).join('; ')}` } : {}),
      },
      {
        label: `incremental, ${modifiedPerTurn + 2} changed files, full scan (the fallback)`,
        rewindable: timing(incremental.full, 'checkpoint() scanning the whole scope'),
        baseline: gitIncremental,
        target: { kind: 'ratio-at-most', value: 1.0 },
      },
      {
        label: 'first scan',
        rewindable: { name: 'first checkpoint() (journal on)', value: firstScan.journal, unit: 'ms', samples: 1 },
        baseline: { name: 'git add -A + git commit (first)', value: firstScan.git, unit: 'ms', samples: 1 },
        ...(files === 500_000 ? { target: { kind: 'ratio-at-most', value: 0.5 } as const } : {}),
      },
      {
        label: 'resident set after the first checkpoint',
        rewindable: { name: 'process with the journal', value: (firstReports.journal.rssKiB * 1024) / 1e6, unit: 'MB' },
        baseline: { name: 'process scanning in full', value: (firstReports.full.rssKiB * 1024) / 1e6, unit: 'MB' },
        note: 'the difference is what the journal holds (watchers, its set of paths)',
      },
      {
        label: 'peak resident set over the session',
        rewindable: { name: 'process with the journal (VmHWM)', value: (peaks.journal * 1024) / 1e6, unit: 'MB' },
        baseline: { name: 'process scanning in full (VmHWM)', value: (peaks.full * 1024) / 1e6, unit: 'MB' },
      },
    ];
    return {
      journal,
      report: {
        id: 'journal',
        title: `Capture journal vs full scan vs shadow git: ${tree.label}`,
        method: [
          `The tree: ${tree.describe}; ${gitFiles.toLocaleString('en-US')} files in scope, ${(size.bytes / 1e6).toFixed(0)} MB; ${tree.origin}.`,
          "Contenders on the same tree: rewindable with `capture: { journal: true }`, rewindable with `capture: { journal: false }` (every checkpoint scans the scope: the journal's fallback), both durability 'none' and each in a process of its own " +
            '(bench/children/capture-journal-session.ts, run by tsx, the library built by tsup), and a shadow git repository (GIT_DIR outside the project).',
          `First scan: one round, in the order git, full, journal. Then ${turns} turns, each modifying ${modifiedPerTurn} files (one line), creating one beside them and deleting one, and timing each contender's checkpoint, the order rotating; ` +
            `the journal's process has rested at least ${journalRestMs / 1000} s since its previous checkpoint before each (the same at every size, as between an agent's turns); ` +
            'the run checks that every scan reports exactly those changes, and counts journaled checkpoints that fell back to a full scan (with the reason the library gave).',
          'Before every timed step (untimed) `sync` writes out the dirty pages left by the contender before, and the run waits until the other session processes use less than 1 ms of processor time in 100 ms (at most 10 s): ' +
            'one that answered goes on collecting garbage on background threads, which is not the next contender\'s cost. The resident sets are read from /proc/self/status of each session process.',
        ],
        rows,
      },
    };
  } finally {
    for (const session of Object.values(sessions)) await session.close().catch(() => undefined);
    tree.restore();
    removeTree(directory);
  }
}

/** The processes of the sessions other than `contender`'s, to let them fall quiet before it is timed. */
function otherSessions(sessions: Partial<Record<'full' | 'journal', SessionProcess>>, contender: Contender): number[] {
  return (['full', 'journal'] as const).filter((mode) => mode !== contender).flatMap((mode) => (sessions[mode] === undefined ? [] : [sessions[mode].pid]));
}

/** A capture session in a child process (see bench/children/capture-journal-session.ts). */
class SessionProcess {
  private readonly waiting: ((message: { kind: string }) => void)[] = [];
  private closed: Promise<number> | undefined;
  private lastPeakKiB = 0;

  readonly pid: number;
  /** When its last checkpoint ended (performance.now()). */
  lastActive = 0;

  private constructor(private readonly child: ChildProcess) {
    this.pid = child.pid!;
    child.on('message', (message: { kind: string }) => this.waiting.shift()?.(message));
    child.on('exit', (code) => {
      for (const waiter of this.waiting.splice(0)) waiter({ kind: `exit ${code}` });
    });
  }

  static async start(cwd: string, storeDir: string, mode: 'full' | 'journal'): Promise<SessionProcess> {
    const child = fork(childScript, [cwd, storeDir, mode], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const session = new SessionProcess(child);
    const ready = await session.next();
    if (ready.kind !== 'ready') throw new Error(`the ${mode} session process did not start (${ready.kind})`);
    return session;
  }

  private next(): Promise<{ kind: string }> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async checkpoint(): Promise<CheckpointReport> {
    const answer = this.next();
    this.child.send({ kind: 'checkpoint' });
    const report = (await answer) as CheckpointReport;
    if (report.kind !== 'checkpoint') throw new Error(`the session process failed (${report.kind})`);
    this.lastPeakKiB = report.peakKiB;
    return report;
  }

  /** Closes the session; resolves to its peak resident set (KiB) as last reported. */
  close(): Promise<number> {
    this.closed ??= (async () => {
      if (this.child.exitCode === null && this.child.connected) {
        const answer = this.next();
        this.child.send({ kind: 'close' });
        await answer;
      }
      return this.lastPeakKiB;
    })();
    return this.closed;
  }
}

function listRelative(root: string): string[] {
  const found: string[] = [];
  const walk = (current: string, prefix: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      if (entry.name === '.git' || entry.name === 'node_modules') continue;
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) walk(path.join(current, entry.name), relative);
      else if (entry.isFile()) found.push(relative);
    }
  };
  walk(root, '');
  return found.sort();
}

