import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointManager } from '../lib/library.js';
import { generateProject } from '../lib/generated-project.js';
import type { Figure, Row, ScenarioReport } from '../lib/results.js';
import type { Scenario, ScenarioContext } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { sourceFile } from '../lib/source-text.js';
import { rotate, shuffled } from '../lib/ordering.js';
import { sleep, stopwatch, summarize } from '../lib/timing.js';
import { editFirstLine } from '../lib/turn-edits.js';
import { copyTree, listFiles, removeTree, settleDisk, treeBytes } from '../lib/workspace.js';

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The default real tree: an installed package's full source and build tree (TypeScript sources, JavaScript, declarations, source maps). */
const defaultRealTree = path.join(repositoryRoot, 'node_modules', '@anthropic-ai', 'sdk');
/** Longer than the racy window on any filesystem (2 s at most): files must look old to both tools before their first scan. */
const settleMs = 2100;
const modifiedPerTurn = 8;
const durabilities = ['none', 'full'] as const;
type Durability = (typeof durabilities)[number];
type Contender = Durability | 'git';

interface TreeSpec {
  label: string;
  describe: string;
  /** Writes the project into `root`. */
  create(root: string): void;
  firstScanRounds: number;
}

interface Session {
  root: string;
  manager?: CheckpointManager;
  git?: ShadowGit;
  /** The id (checkpoint id or commit) of the first checkpoint, and of the latest. */
  first: string;
  latest: string;
}

/**
 * A capture scope (every checkpoint scans the project)
 * against a shadow git repository on the same tree, on a generated project
 * of 20,000 files (~200 MB) and on a real source tree. Each contender works
 * on its own identical copy: rewinds change the tree, and one tool's writes
 * must not show up as changes to the other.
 */
export const captureScope: Scenario = {
  id: 'capture',
  summary: 'capture scope (scan-based checkpoints) vs shadow git: first scan, incremental, store size, rewind; generated 20,000 files and a real tree',
  async run(context) {
    const generatedFiles = context.quick ? 2000 : 20_000;
    const realTree = context.realTree ?? defaultRealTree;
    if (!fs.existsSync(realTree)) throw new Error(`The real source tree ${realTree} does not exist: run npm ci, or pass --real-tree <directory>.`);
    const trees: TreeSpec[] = [
      {
        label: `generated, ${generatedFiles.toLocaleString('en-US')} files`,
        describe:
          `a generated project of ${generatedFiles.toLocaleString('en-US')} source-like TypeScript files (10 KB on average, zlib compresses them about 3×), ` +
          'plus a `.gitignore` that leaves out `node_modules/`, `dist/` and `*.log`, and 300 files there (left out by both tools)',
        create: (root) => {
          generateProject(root, generatedFiles, 10_000, 6);
          fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\ndist/\n*.log\n');
          for (let index = 0; index < 100; index++) {
            for (const ignored of [`dist/chunk-${index}.js`, `node_modules/dependency-${index % 10}/index-${index}.js`, `logs/run-${index}.log`]) {
              fs.mkdirSync(path.dirname(path.join(root, ignored)), { recursive: true });
              fs.writeFileSync(path.join(root, ignored), sourceFile(900_000 + index, 4000));
            }
          }
        },
        firstScanRounds: context.quick ? 1 : 3,
      },
      {
        label: `real tree (${path.basename(path.dirname(realTree)).startsWith('@') ? `${path.basename(path.dirname(realTree))}/` : ''}${path.basename(realTree)})`,
        describe: `a copy of the real source tree ${path.relative(repositoryRoot, realTree).startsWith('..') ? realTree : path.relative(repositoryRoot, realTree)}`,
        create: (root) => copyTree(realTree, root),
        firstScanRounds: context.quick ? 1 : 5,
      },
    ];
    const reports: ScenarioReport[] = [];
    for (const tree of trees) reports.push(await runOnTree(context, tree));
    return reports;
  },
};

async function runOnTree(context: ScenarioContext, spec: TreeSpec): Promise<ScenarioReport> {
  const directory = context.workspace.directory('capture', spec.label.replace(/[^a-z0-9]+/gi, '-'));
  const roots = { git: path.join(directory, 'tree-git'), none: path.join(directory, 'tree-none'), full: path.join(directory, 'tree-full') };
  const sessions = {} as Record<Contender, Session>;
  const log = (message: string) => context.log(`capture (${spec.label}): ${message}`);
  try {
    log('creating the tree and its copies');
    spec.create(roots.git);
    copyTree(roots.git, roots.none);
    copyTree(roots.git, roots.full);
    const original = listFiles(roots.git);
    const size = treeBytes(roots.git);
    await sleep(settleMs);

    // First scan: a fresh store (or repository) every round; the last round's stay for the rest.
    const firstScan: Record<Contender, number[]> = { none: [], full: [], git: [] };
    for (let round = 0; round < spec.firstScanRounds; round++) {
      log(`first scan ${round + 1}/${spec.firstScanRounds}`);
      for (const contender of rotate(['git', ...durabilities] as Contender[], round)) {
        const previous = sessions[contender];
        await previous?.manager?.close();
        removeTree(path.join(directory, `store-${contender}`));
        await settleDisk();
        if (contender === 'git') {
          const git = ShadowGit.init(path.join(directory, 'store-git'), roots.git);
          let first = '';
          firstScan.git.push(await stopwatch(() => (first = git.checkpoint('first'))));
          sessions.git = { root: roots.git, git, first, latest: first };
        } else {
          const manager = await CheckpointManager.open({ cwd: roots[contender], storeDir: path.join(directory, `store-${contender}`), durability: contender, capture: { journal: false } });
          let first = '';
          firstScan[contender].push(await stopwatch(async () => (first = await manager.checkpoint())));
          sessions[contender] = { root: roots[contender], manager, first, latest: first };
        }
      }
    }
    const gitFiles = sessions.git.git!.run(['ls-files', '-z']).split('\0').filter(Boolean).length;
    for (const durability of durabilities) {
      const scanned = sessions[durability].manager!.lastScan!.scanned;
      if (scanned !== gitFiles) throw new Error(`the capture scope holds ${scanned} files but git tracks ${gitFiles}: the scopes differ`);
    }

    // Turns of small edits: 8 files modified, 1 created (in a new directory), 1 deleted.
    const turns = context.quick ? 4 : 19;
    const incremental: Record<Contender, number[]> = { none: [], full: [], git: [] };
    const editable = shuffled(
      [...original.keys()].filter((file) => /\.(ts|js|mjs|mts|cjs|py|md|c|h)$/.test(file) && !/^(dist|node_modules|logs)\//.test(file)),
      7,
    );
    let nextEditable = 0;
    const originals = new Map<string, Buffer>();
    for (let turn = 0; turn < turns; turn++) {
      log(`turn ${turn + 1}/${turns}`);
      const modified = editable.slice(nextEditable, nextEditable + modifiedPerTurn);
      const deleted = editable[nextEditable + modifiedPerTurn]!;
      nextEditable += modifiedPerTurn + 1;
      const created = `added-in-turn-${turn}/module.ts`;
      for (const file of [...modified, deleted]) if (!originals.has(file)) originals.set(file, fs.readFileSync(path.join(roots.git, file)));
      for (const root of Object.values(roots)) {
        for (const file of modified) editFirstLine(path.join(root, file), `${turn}`);
        fs.rmSync(path.join(root, deleted));
        fs.mkdirSync(path.join(root, path.dirname(created)), { recursive: true });
        fs.writeFileSync(path.join(root, created), sourceFile(700_000 + turn, 6000));
      }
      for (const contender of rotate(['git', ...durabilities] as Contender[], turn)) {
        const session = sessions[contender];
        await settleDisk();
        if (contender === 'git') {
          incremental.git.push(await stopwatch(() => (session.latest = session.git!.checkpoint(`turn ${turn}`))));
        } else {
          incremental[contender].push(await stopwatch(async () => (session.latest = await session.manager!.checkpoint())));
          const scan = session.manager!.lastScan!;
          if (scan.modified.length !== modifiedPerTurn || scan.created.length !== 1 || scan.deleted.length !== 1) {
            throw new Error(`turn ${turn}: the scan found ${scan.modified.length} modified, ${scan.created.length} created, ${scan.deleted.length} deleted; expected ${modifiedPerTurn}, 1, 1`);
          }
        }
      }
    }
    const checkpoints = turns + 1;
    const storeBytes = { none: treeBytes(path.join(directory, 'store-none')), full: treeBytes(path.join(directory, 'store-full')) };
    const gitSize = sessions.git.git!.size();

    // Rewind the scope to the first checkpoint; untimed, undo it (back to the latest) and let the files age.
    // Seven rounds: with three, the median of either side moved by a fifth between full runs, and with five by
    // a tenth (the first rewind of a session, twice as slow as the next ones, was one sample in five).
    const rewindRounds = context.quick ? 1 : 7;
    const rewinds: Record<Contender, number[]> = { none: [], full: [], git: [] };
    for (let round = 0; round < rewindRounds; round++) {
      await sleep(settleMs);
      log(`rewind to the first checkpoint ${round + 1}/${rewindRounds}`);
      const undo: Partial<Record<Durability, string>> = {};
      for (const contender of rotate(['git', ...durabilities] as Contender[], round)) {
        const session = sessions[contender];
        await settleDisk();
        if (contender === 'git') {
          rewinds.git.push(
            await stopwatch(() => {
              session.git!.run(['checkout', '--no-overlay', session.first, '--', '.']);
              session.git!.run(['clean', '-fdq']);
            }),
          );
        } else {
          rewinds[contender].push(await stopwatch(async () => (undo[contender] = (await session.manager!.rewindFiles(session.first)).undoCheckpointId)));
        }
      }
      if (round === 0) for (const contender of ['git', ...durabilities] as Contender[]) assertRestored(sessions[contender].root, original, originals, contender);
      sessions.git.git!.run(['checkout', '--no-overlay', sessions.git.latest, '--', '.']);
      for (const durability of durabilities) await sessions[durability].manager!.rewindFiles(undo[durability]!);
    }
    // The command as the capture target words it, once: without --no-overlay, files created in later turns (committed since) stay.
    await sleep(settleMs);
    await settleDisk();
    let leftBehind = 0;
    const literalMs = await stopwatch(() => {
      sessions.git.git!.run(['checkout', sessions.git.first, '--', '.']);
      sessions.git.git!.run(['clean', '-fdq']);
    });
    for (const file of listFiles(roots.git).keys()) if (!original.has(file)) leftBehind += 1;
    sessions.git.git!.run(['gc', '-q']);
    const packedGit = sessions.git.git!.size();

    const timing = (values: number[], name: string): Figure => {
      const summary = summarize(values);
      return { name, value: summary.medianMs, unit: 'ms', samples: summary.samples };
    };
    const rows: Row[] = [];
    const gitFirst = timing(firstScan.git, 'git add -A + git commit (first)');
    const gitIncremental = timing(incremental.git, 'git add -A + git commit');
    const gitRewind = timing(rewinds.git, 'git checkout --no-overlay <first> -- . + git clean -fd');
    for (const durability of durabilities) {
      const fair = durability === 'none';
      const target = fair ? { target: { kind: 'ratio-at-most', value: 1.0 } as const } : { note: 'git does not fsync' };
      rows.push({ label: 'first scan', rewindable: timing(firstScan[durability], `first checkpoint(), '${durability}'`), baseline: gitFirst, ...target });
    }
    for (const durability of durabilities) {
      const fair = durability === 'none';
      const target = fair ? { target: { kind: 'ratio-at-most', value: 1.0 } as const } : { note: 'git does not fsync' };
      rows.push({ label: `incremental, ${modifiedPerTurn + 2} changed files`, rewindable: timing(incremental[durability], `checkpoint(), '${durability}'`), baseline: gitIncremental, ...target });
    }
    rows.push({
      label: `store after ${checkpoints} checkpoints`,
      rewindable: { name: "store directory, 'full'", value: storeBytes.full.bytes, unit: 'bytes' },
      baseline: { name: `shadow .git (${gitSize.looseObjects.toLocaleString('en-US')} loose objects)`, value: gitSize.gitBytes, unit: 'bytes' },
      target: { kind: 'ratio-at-most', value: 1.0 },
    });
    rows.push({
      label: `store after ${checkpoints} checkpoints`,
      rewindable: { name: "store directory, 'none'", value: storeBytes.none.bytes, unit: 'bytes' },
      baseline: { name: 'shadow .git', value: gitSize.gitBytes, unit: 'bytes' },
    });
    rows.push({
      label: `store after ${checkpoints} checkpoints, disk blocks`,
      rewindable: { name: "store directory, 'full'", value: storeBytes.full.diskBytes, unit: 'bytes' },
      baseline: { name: 'shadow .git', value: gitSize.gitDiskBytes, unit: 'bytes' },
    });
    rows.push({
      label: `store after ${checkpoints} checkpoints (+ rewinds)`,
      rewindable: { name: "store directory, 'full', after the rewinds", value: treeBytes(path.join(directory, 'store-full')).bytes, unit: 'bytes' },
      baseline: { name: 'shadow .git after git gc', value: packedGit.gitBytes, unit: 'bytes' },
      note: 'git gc packs with deltas; shadow tools rarely run it',
    });
    for (const durability of durabilities) {
      const fair = durability === 'none';
      const target = fair ? { target: { kind: 'ratio-at-most', value: 1.0 } as const } : { note: 'git does not fsync' };
      rows.push({ label: 'rewind the scope to the first checkpoint', rewindable: timing(rewinds[durability], `rewindFiles(first), '${durability}'`), baseline: gitRewind, ...target });
    }
    rows.push({
      label: 'rewind the scope to the first checkpoint',
      rewindable: timing(rewinds.none, "rewindFiles(first), 'none'"),
      baseline: { name: 'git checkout <first> -- . + git clean -fd (once)', value: literalMs, unit: 'ms', samples: 1 },
      note: `leaves the ${leftBehind} files created in later turns in place`,
    });
    return {
      id: 'capture',
      title: `Capture scope vs shadow git: ${spec.label}`,
      method: [
        `The tree: ${spec.describe}; ${original.size.toLocaleString('en-US')} files, ${(size.bytes / 1e6).toFixed(0)} MB; ${gitFiles.toLocaleString('en-US')} of them in scope (both tools agree on the count).`,
        "Contenders, each on its own identical copy: rewindable with `capture: { journal: false }` (every checkpoint scans the scope; the journal has a scenario of its own; defaults otherwise: `.gitignore` honoured, `.git` and `node_modules` left out) and durability 'none' or 'full', and a shadow git repository (GIT_DIR outside the project, automatic gc off). " +
          `The copies are ${settleMs / 1000} s old before the first scan, as files of a real project are (a file changed just before it is read is read again at the next scan, by git and by rewindable: the racy-timestamp rule).`,
        `First scan: a fresh store or repository every round, ${spec.firstScanRounds} rounds, the order rotating. Timed: the first \`checkpoint()\` (scan, read, hash, compress and store everything) against the first \`git add -A\` + \`git commit\`.`,
        `Incremental: ${turns} turns, each modifying ${modifiedPerTurn} files (one line), creating one file in a new directory and deleting one, then timing each contender's checkpoint right away; ` +
          "the run checks that every scan reports exactly those changes. Back to back, so both tools also re-read the previous turn's files once (racy timestamps): the same small extra work on both sides.",
        `Store size after the first checkpoint and the ${turns} turns (${checkpoints} checkpoints): apparent bytes of every file of each store, disk blocks for context, and \`.git\` after \`git gc\` at the end of the scenario.`,
        'Before every timed step (untimed) `sync` writes out the dirty pages left by the contender before, so that an fsync never pays for another tool\'s writes. ' +
          `Rewind: back to the first checkpoint (${rewindRounds} rounds; each undone, untimed, and left to age ${settleMs / 1000} s before the next). ` +
          'Git needs `--no-overlay` to delete files created in later turns (they are in its index, so `git clean` keeps them); the plain `git checkout <rev> -- .` is timed once for context. ' +
          'The run checks after the first round that every copy holds the original tree again.',
      ],
      rows,
    };
  } finally {
    for (const session of Object.values(sessions)) await session.manager?.close();
    removeTree(directory);
  }
}


/** The tree holds exactly the original files again, and the ones the turns touched have their original bytes. */
function assertRestored(root: string, original: ReadonlyMap<string, number>, originals: ReadonlyMap<string, Buffer>, contender: Contender): void {
  const now = listFiles(root);
  const extra = [...now.keys()].filter((file) => !original.has(file));
  const missing = [...original.keys()].filter((file) => !now.has(file));
  const wrong = [...originals].filter(([file, bytes]) => !fs.readFileSync(path.join(root, file)).equals(bytes)).map(([file]) => file);
  if (extra.length + missing.length + wrong.length > 0) {
    throw new Error(`${contender}: the rewind left ${extra.length} extra files (${extra.slice(0, 3).join(', ')}), ${missing.length} missing (${missing.slice(0, 3).join(', ')}), ${wrong.length} with other bytes`);
  }
}
