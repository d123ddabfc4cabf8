import path from 'node:path';
import { CheckpointManager } from '../lib/library.js';
import { generatedPath, generateProject } from '../lib/generated-project.js';
import type { ChartPoint, Row, ScenarioReport } from '../lib/results.js';
import type { Scenario, ScenarioContext } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { sleep, stopwatch, summarize, type Timing } from '../lib/timing.js';
import { editFirstLine } from '../lib/turn-edits.js';
import { removeTree } from '../lib/workspace.js';

const trackedCount = 20;
const changedPerTurn = 5;
const averageFileBytes = 4000;
/** Longer than the racy window of src/fs/stat-signature.ts wherever the project is (2 s at most). */
const realisticGapMs = 2100;
const durabilities = ['none', 'full'] as const;
type Durability = (typeof durabilities)[number];

interface ProjectUnderTest {
  files: number;
  root: string;
  directory: string;
  git: ShadowGit;
  managers: Record<Durability, CheckpointManager>;
  tracked: string[];
  realistic: Record<Durability | 'git', number[]>;
  backToBack: Record<Durability | 'git', number[]>;
}

/**
 * The cost of the per-turn `checkpoint()` when an agent has
 * touched 20 files so far and changed 5 of them since the last turn, in
 * projects of growing size, against a shadow git checkpoint of the same tree.
 */
export const checkpointPerTurn: Scenario = {
  id: 'checkpoint',
  summary: "per-turn checkpoint() with 20 tracked files (5 changed) vs a shadow git add -A + commit, at 2,000 / 20,000 / 100,000 files",
  async run(context) {
    const sizes = context.quick ? [500, 2000] : [2000, 20_000, 100_000];
    const targetSize = sizes[1]!;
    const rounds = context.quick ? 4 : 10;
    const backToBackRounds = context.quick ? 3 : 8;
    const projects: ProjectUnderTest[] = [];
    try {
      for (const files of sizes) projects.push(await prepare(context, files));
      const turnEdits = (project: ProjectUnderTest, turn: number) => {
        const group = turn % (trackedCount / changedPerTurn);
        for (let index = 0; index < changedPerTurn; index++) {
          editFirstLine(path.join(project.root, project.tracked[group * changedPerTurn + index]!), `${turn}`);
        }
      };

      // Realistic turns: a turn's edits happen, then seconds pass (the model finishes, the user
      // reads and types) before the next user message's checkpoint, which every contender takes
      // at least realisticGapMs after the edits. Each project gets its next turn's edits as soon as
      // it has been measured, so its wait overlaps the other projects' measurements.
      const warmUpRounds = 2;
      const editedAt = new Map<ProjectUnderTest, number>();
      for (const project of projects) {
        turnEdits(project, 0);
        editedAt.set(project, performance.now());
      }
      for (let round = 0; round < warmUpRounds + rounds; round++) {
        const measured = round >= warmUpRounds;
        context.log(measured ? `checkpoint: realistic turn ${round + 1 - warmUpRounds}/${rounds}` : `checkpoint: warm-up turn ${round + 1}/${warmUpRounds}`);
        for (const project of projects) {
          await sleep(realisticGapMs - (performance.now() - editedAt.get(project)!));
          for (const durability of round % 2 === 0 ? durabilities : [...durabilities].reverse()) {
            const manager = project.managers[durability];
            const ms = await stopwatch(() => manager.checkpoint());
            if (measured) project.realistic[durability].push(ms);
          }
          // Git last: on a journaling filesystem its index and objects (megabytes at 100,000 files)
          // would otherwise be in the journal that rewindable's fsync has to commit.
          const gitMs = await stopwatch(() => project.git.checkpoint(`turn ${round}`));
          if (measured) project.realistic.git.push(gitMs);
          turnEdits(project, round + 1);
          editedAt.set(project, performance.now());
        }
      }

      // Back to back: the checkpoint comes right after the edits, so the files it reads were
      // modified within the racy window and are read again at the next checkpoint: the worst case.
      const middle = projects.find((project) => project.files === targetSize)!;
      // The first back-to-back turn also picks up the edits left by the last realistic turn: not measured.
      for (let round = -1; round < backToBackRounds; round++) {
        context.log(round < 0 ? 'checkpoint: back-to-back warm-up turn' : `checkpoint: back-to-back turn ${round + 1}/${backToBackRounds}`);
        turnEdits(middle, warmUpRounds + rounds + 2 + round);
        for (const durability of durabilities) {
          const ms = await stopwatch(() => middle.managers[durability].checkpoint());
          if (round >= 0) middle.backToBack[durability].push(ms);
        }
        const gitMs = await stopwatch(() => middle.git.checkpoint(`back-to-back ${round}`));
        if (round >= 0) middle.backToBack.git.push(gitMs);
      }
      return [report(projects, targetSize, context)];
    } finally {
      for (const project of projects) {
        for (const manager of Object.values(project.managers)) await manager.close();
        removeTree(project.directory);
      }
    }
  },
};

async function prepare(context: ScenarioContext, files: number): Promise<ProjectUnderTest> {
  const directory = context.workspace.directory('checkpoint', String(files));
  const root = path.join(directory, 'project');
  context.log(`checkpoint: generating a project of ${files.toLocaleString('en-US')} files`);
  generateProject(root, files, averageFileBytes, files);
  const git = ShadowGit.init(path.join(directory, 'shadow.git'), root);
  const initialMs = await stopwatch(() => git.checkpoint('initial'));
  context.log(`checkpoint: shadow git's first commit of ${files.toLocaleString('en-US')} files took ${(initialMs / 1000).toFixed(1)} s`);
  const tracked = Array.from({ length: trackedCount }, (_, index) => generatedPath(Math.floor((index * files) / trackedCount)));
  const managers = {} as Record<Durability, CheckpointManager>;
  for (const durability of durabilities) {
    const manager = await CheckpointManager.open({ cwd: root, storeDir: path.join(directory, `store-${durability}`), durability });
    await manager.checkpoint();
    for (const file of tracked) await manager.trackEdit(file);
    managers[durability] = manager;
  }
  return { files, root, directory, git, managers, tracked, realistic: { none: [], full: [], git: [] }, backToBack: { none: [], full: [], git: [] } };
}

const gitName = 'shadow git: git add -A + git commit';
const rewindableName = (durability: Durability) => `checkpoint(), durability '${durability}'`;

function report(projects: ProjectUnderTest[], targetSize: number, context: ScenarioContext): ScenarioReport {
  const rows: Row[] = [];
  const chart: ChartPoint[] = [];
  const timings = projects.map((project) => ({
    project,
    none: summarize(project.realistic.none),
    full: summarize(project.realistic.full),
    git: summarize(project.realistic.git),
  }));
  const figure = (name: string, timing: Timing) => ({ name, value: timing.medianMs, unit: 'ms' as const, samples: timing.samples });
  for (const { project, none, full, git } of timings) {
    const label = `${project.files.toLocaleString('en-US')} files`;
    const atTarget = project.files === targetSize;
    rows.push({ label, rewindable: figure(rewindableName('none'), none), baseline: figure(gitName, git), ...(atTarget ? { target: { kind: 'faster-by-at-least', value: 50 } as const } : {}) });
    rows.push({ label, rewindable: figure(rewindableName('full'), full), baseline: figure(gitName, git), ...(atTarget ? { target: { kind: 'faster-by-at-least', value: 20 } as const } : {}) });
    chart.push(
      { series: "rewindable, durability 'none'", files: project.files, ms: none.medianMs },
      { series: "rewindable, durability 'full' (default)", files: project.files, ms: full.medianMs },
      { series: 'shadow git (add -A + commit)', files: project.files, ms: git.medianMs },
    );
  }
  const smallest = timings[0]!;
  for (const later of timings.slice(1)) {
    for (const durability of durabilities) {
      rows.push({
        label: `flat: ${later.project.files.toLocaleString('en-US')} vs ${smallest.project.files.toLocaleString('en-US')} files`,
        rewindable: figure(`${rewindableName(durability)} at ${later.project.files.toLocaleString('en-US')} files`, later[durability]),
        baseline: figure(`the same at ${smallest.project.files.toLocaleString('en-US')} files`, smallest[durability]),
        ...(later.project.files === targetSize ? { target: { kind: 'ratio-at-most', value: 2 } as const } : {}),
      });
    }
  }
  const middle = projects.find((project) => project.files === targetSize)!;
  for (const durability of durabilities) {
    rows.push({
      label: `${targetSize.toLocaleString('en-US')} files, back to back (worst case)`,
      rewindable: figure(rewindableName(durability), summarize(middle.backToBack[durability])),
      baseline: figure(gitName, summarize(middle.backToBack.git)),
      note: 'each checkpoint also re-reads the previous turn’s files (racy window)',
    });
  }
  return {
    id: 'checkpoint',
    title: 'Per-turn checkpoint against project size',
    method: [
      `Generated projects of ${projects.map((project) => project.files.toLocaleString('en-US')).join(' / ')} source-like files (${averageFileBytes / 1000} KB on average). ` +
        `The session has tracked ${trackedCount} files; each turn changes ${changedPerTurn} of them (a one-line edit, rotating through the 20), then the next user message's \`checkpoint()\` is timed.`,
      `The shadow git repository (GIT_DIR outside the project) sees the same tree and the same edits; its checkpoint is \`git add -A\` then \`git commit\`, two child processes, timed together.`,
      `Realistic turns (the targets): the checkpoint comes ${realisticGapMs / 1000} s after the turn's last edit, as when a model finishes its answer and the user types the next message. ` +
        `A file modified shortly before rewindable read it is read again at the next checkpoint (racy-timestamp rule: within 50 ms on a local Linux filesystem with sub-millisecond timestamps, such as this machine's ext4, and 2 s elsewhere), so this gap keeps the previous turn's 5 files from being re-read on any filesystem. ` +
        `The wait is not timed. Medians of ${context.quick ? 4 : 10} turns after 2 warm-up turns.`,
      "In each turn rewindable goes first and git last: on a journaling filesystem (ext4 by default) an fsync commits the journal, which would otherwise carry git's index and objects (megabytes at 100,000 files) too. The turn's own edits are still unwritten when rewindable's 'full' checkpoint fsyncs, as in real use.",
      `Back to back (context): the checkpoint follows the edits at once, so every checkpoint reads the 5 changed files and re-reads the previous turn's 5: what a scripted loop pays.`,
    ],
    rows,
    chart,
  };
}
