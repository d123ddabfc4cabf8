import type { Machine } from './machine.js';
import { describeRatio, describeTarget, formatFigure, verdictOf, type Row, type ScenarioReport } from './results.js';

export interface RunDescription {
  machine: Machine;
  loadBefore: string;
  loadAfter: string;
  durationSeconds: number;
  command: string;
  quick: boolean;
  chartFile: string | undefined;
}

const escape = (text: string) => text.replaceAll('|', '\\|');

function table(rows: readonly Row[]): string[] {
  return [
    '| case | rewindable | median | baseline | median | ratio | target | result |',
    '|---|---|--:|---|--:|--:|---|---|',
    ...rows.map(
      (row) =>
        `| ${escape(row.label)} | ${escape(row.rewindable.name)}${row.rewindable.samples ? ` (n=${row.rewindable.samples})` : ''} | ${formatFigure(row.rewindable)} | ` +
        `${escape(row.baseline?.name ?? '—')}${row.baseline?.samples ? ` (n=${row.baseline.samples})` : ''} | ${formatFigure(row.baseline)} | ${describeRatio(row)} | ` +
        `${describeTarget(row.target, row.rewindable.unit)} | ${verdictOf(row) === 'info' ? 'info' : `**${verdictOf(row)}**`}${row.note ? ` (${escape(row.note)})` : ''} |`,
    ),
  ];
}

interface TargetRow {
  report: ScenarioReport;
  row: Row;
}

function targetsOf(reports: readonly ScenarioReport[]): TargetRow[] {
  return reports.flatMap((report) => report.rows.filter((row) => row.target !== undefined).map((row) => ({ report, row })));
}

function targetsTable(targets: readonly TargetRow[]): string[] {
  return [
    '| scenario | case | ratio (or value) | target | result |',
    '|---|---|--:|---|---|',
    ...targets.map(
      ({ report, row }) =>
        `| ${escape(report.title)} | ${escape(row.label)}: ${escape(row.rewindable.name)} | ` +
        `${row.baseline === undefined ? formatFigure(row.rewindable) : describeRatio(row)} | ${describeTarget(row.target, row.rewindable.unit)} | **${verdictOf(row)}** |`,
    ),
  ];
}

/**
 * What profiling found where rewindable does not reach a target, or only
 * some runs do. Kept beside the report so every run carries the explanation;
 * each one is shown when its targets were missed in the run (`report` is a
 * scenario report id, `label` the start of a row label).
 */
const knownGaps: Array<{ report: string; label?: string; text: string }> = [
  {
    report: 'rewind',
    text:
      'Rewind of 1,000 files against `git checkout`: rewindable first stores the current bytes of every file as its undo point, then replaces each file atomically (a temporary file renamed over the old one: a reader or a crash sees the old bytes or the new ones, never a mix); `git checkout` saves nothing and unlinks each file and creates it again, which a crash can leave empty or half-written. ' +
      'Both take a new inode per file, the largest single cost on this machine\'s ext4 (no journal): in `perf` profiles the allocator stepping over recently freed inodes (`recently_deleted` under `ext4_create`) took 37% of the writing threads\' samples on a settled disk; renaming over a file also makes ext4 write its data at once (`auto_da_alloc`), where git\'s create leaves it to the flusher. ' +
      'What is left on the main thread is mostly page faults on fresh buffers, above all each backup read from the store before it is copied to the writing threads. ' +
      'Full runs on this 2-core machine have measured 0.75–1.39×, moving with the load other processes put on it: a near miss, not a settled result.',
  },
  {
    report: 'capture',
    label: 'rewind',
    text:
      'Capture rewind: the plan `lstat`s every path of the scope, as `git checkout` checks its index, and settles the untouched ones without further work; the changed files\' targets are read from the store (a changed file\'s previous version and a deleted file\'s last content are stored compressed on their own, so reading them inflates no shared bundle), and the writes and removals run on the writing threads. ' +
      'On two cores the gap is processor time: in scripts over the real tree rewindable\'s threads used 190–244 ms per rewind where git\'s two processes used 90–120 ms. Where it goes: exact line statistics need the current bytes of every changed file, which `git checkout` never reads; Node\'s `lstatSync` costs about 5 µs a call against 2.7 µs in a C loop; 3,000–3,500 page faults per rewind at 13–18 µs each on this virtual machine; V8 still compiling the rewind\'s functions over its first rounds (rewinds are rare), and scavenges of 7–31 ms falling inside about half the timed rewinds. ' +
      'Measured and not kept: reading the targets ahead on another thread while the lstats run (the work only moved between the two busy cores), storing previous versions uncompressed, smaller bundles (a larger store, a slower first scan), two writing threads instead of four, and buffers reused across rewinds (no fewer page faults). ' +
      'Full runs on a busier machine measured 1.01–1.09× on the real tree and 0.75–1.03× on the generated one, with the library run from its TypeScript sources through tsx; on a quiet machine, built as users import it, 0.67–0.84× on the real tree in four full runs (0.91× for the same code run through tsx).',
  },
  {
    report: 'edit',
    text:
      'Tracked Edit, first edit of a file: tracking adds hashing the file and the bytes written, one append to the pack kept open (header and bytes in one `writev`), and one log append that holds both the first-backup record and the record of the write it is taken for. No file is created per backup. ' +
      'Most of an Edit\'s time is creating its temporary file and renaming it over the old one, which the untracked Edit does too; on this machine\'s ext4 (no journal) a create costs more or less depending on what was deleted near the directory lately, so all contenders\' files share one directory, and the ratio still moves with it (partial runs on one afternoon: 1.06–1.53×). ' +
      'Timing probes put the tracking itself at 150–210 µs (state and hash 22–27, records and hash of the new bytes 27–35, pack append 48–70, log lines 31–46, session state 16–24). The scenario runs that code about 130 times, too few for V8 to optimize it (`--trace-opt`); in a script of 1,500 Edits per process the ratio was 1.10×. ' +
      'Measured and not kept: creating the temporary file on the thread pool while the backup is taken (a create there cost 51 µs against 12 µs on this thread).',
  },
  {
    report: 'checkpoint',
    label: '20,000 files',
    text:
      'Per-turn checkpoint at 20,000 files: rewindable\'s checkpoint does not grow with the project (a plain `lstat` of each of the 20 tracked files, then a read, hash and backup of the 5 changed ones, one pack append and one log append: 91 system calls by strace), so the ratio follows git\'s own time and rewindable\'s few milliseconds, both of which move with the machine\'s load. ' +
      'The same checkpoint takes about 2 ms right after other work and 3.3–3.5 ms after a 2-second pause, as in the benchmark\'s realistic turns: an idle virtual processor comes back with cold caches, and a checkpoint is a few milliseconds of many small steps.',
  },
  {
    report: 'hooks',
    text:
      'Claude Code hooks: each hook is a new Node process, the thin client of the project\'s resident hook server (docs/hooks.md), which keeps the session, the code and the scan index in memory; its floor is one `node -e 0`. ' +
      'Quiet full runs have measured every hook at 0.98–1.28× `node -e 0`; misses came in runs with other work on the machine, where a process start varies most.',
  },
  {
    report: 'capture',
    label: 'incremental',
    text:
      'Incremental capture scans: every file in scope is `lstat`ed each turn, as git does for its index. Directory listings are reused while a directory is unchanged, `.gitignore` verdicts while the rules are, and unchanged files are decided by a plain lstat compared as numbers; the scan lands below git\'s cost in most runs, near it in loaded ones.',
  },
  {
    report: 'journal',
    label: 'incremental, 10 changed files, full scan',
    text:
      'Full-scan fallback at 200,000 and 500,000 files: every file is `lstat`ed on two worker threads, as git\'s preloaded index does, and on two cores those threads and the calling thread share the processor. ' +
      'What the calling thread does at 500,000 files, from a profile of one scan: look each path up in the scan index (0.45 s under the profiler) and judge each path against the previous verdicts (0.33 s); the checkpoint then examines only the tracked paths the walk did not vouch for, not all 500,000. ' +
      'Runs alone on this machine measured 0.70–0.90× at 200,000 files and 0.77–1.31× at 500,000 (git 2.1–3.2 s), the highest before the checkpoint stopped going over every tracked path. ' +
      'Measured and not kept: stamping each index record as unchanged instead of building a set of those paths (the lookups that replaced the set cost as much, and the writes slowed the glance).',
  },
  {
    report: 'journal',
    label: '500,000 files against',
    text:
      'Journaled checkpoint, 500,000 files against 20,000: the checkpoint examines the paths the watcher reported, and its processor time does not grow with the project: a profile over six turns found 7–8 ms of it per turn at both sizes, and a `gc` observer in the session process saw no garbage collection during any timed turn. ' +
      'What moved the row from run to run (medians of 13–38 ms at 500,000 files against 6–9 ms at 20,000) was the machine around the checkpoint: the full-scan contender\'s process went on collecting garbage on background threads after it answered (26–93 ms of its processor time during a 10 ms turn), which the run now waits out, and the journal\'s process rested longer between turns at 500,000 files, now 5 s at every size. ' +
      'With both, a full run measured 9.16 ms against 7.25 ms (1.26×); single turns still range from 6 to 32 ms.',
  },
];

/** The explanations for the targets this run missed, plus a word on noise. */
function gapsOf(targets: readonly TargetRow[]): string[] {
  const missed = targets.filter(({ row }) => verdictOf(row) === 'MISS');
  const explained = knownGaps.filter((gap) => missed.some(({ report, row }) => report.id === gap.report && (gap.label === undefined || row.label.startsWith(gap.label))));
  const unexplained = missed.filter(({ report, row }) => !knownGaps.some((gap) => report.id === gap.report && (gap.label === undefined || row.label.startsWith(gap.label))));
  return [
    ...(missed.length === 0 ? ['Every target was met in this run.'] : []),
    ...explained.map((gap) => gap.text),
    ...unexplained.map(({ report, row }) => `${report.title}, ${row.label}: missed in this run, with no profile on record; rerun on a quiet machine before drawing conclusions.`),
    'Ratios near a target (the 50× checkpoint, the 1.5× tracked Edit, the capture scans and rewinds) move by 10–25% between runs with the machine\'s load; the tables here are one full run.',
  ];
}

/** Links in the README must be absolute: it is read on the registry's page, where docs/ is not shipped. */
const repositoryFiles = 'https://github.com/rewindable/rewindable';

/** The Benchmarks section of README.md: the machine, the targets of this run, the chart, how to rerun. */
export function readmeSection(reports: readonly ScenarioReport[], run: RunDescription): string {
  const { machine } = run;
  const targets = targetsOf(reports);
  const passed = targets.filter(({ row }) => verdictOf(row) === 'PASS').length;
  return [
    `<!-- Written by \`${run.command}\` (bench/run.ts): rerun it, do not edit this text. -->`,
    `One run of \`${run.command}\` on ${machine.cpu}, ${machine.cores} cores, Node.js ${machine.node}, git ${machine.git}, ${machine.filesystem}, ` +
      `${machine.date.slice(0, 10)}${run.quick ? ' (quick mode: small sizes, not comparable to a full run)' : ''}: ${passed} of ${targets.length} targets met. Ratios are rewindable / baseline, of medians, each scenario side by side with its baseline in one run. ` +
      `Method, every figure and where and why targets are missed: [docs/benchmarks.md](${repositoryFiles}/blob/main/docs/benchmarks.md).`,
    '',
    ...targetsTable(targets),
    '',
    ...(run.chartFile === undefined ? [] : [`![Per-turn checkpoint cost against project size](${repositoryFiles}/raw/main/docs/${run.chartFile})`, '']),
    'Rerun: `npm run bench` (about 23 minutes on 2 cores, 14 of them the journal scenario at up to 500,000 files; writes docs/benchmarks.md, the chart and this section), or `npm run bench -- --only checkpoint,rewind` for some scenarios.',
  ].join('\n');
}

/** README.md with its generated Benchmarks region replaced by `section`. */
export function replaceReadmeSection(readme: string, section: string): string {
  const start = '<!-- benchmarks:start -->';
  const end = '<!-- benchmarks:end -->';
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from === -1 || to < from) throw new Error(`README.md has no ${start} ... ${end} region to write the figures into.`);
  return `${readme.slice(0, from + start.length)}\n${section}\n${readme.slice(to)}`;
}

/**
 * Sections of docs/benchmarks.md written by hand, not by this run (the
 * micro-benchmark behind a design decision): a run keeps them as they are.
 */
const handWrittenSections = ['## Threads or promises'];

/** The hand-written sections of an existing docs/benchmarks.md, each up to the next heading of its level. */
export function handWrittenPart(existing: string): string[] {
  return handWrittenSections.flatMap((heading) => {
    const start = existing.indexOf(`\n${heading}\n`);
    if (start === -1) return [];
    const end = existing.indexOf('\n## ', start + heading.length + 2);
    return [existing.slice(start + 1, end === -1 ? undefined : end + 1).trimEnd(), ''];
  });
}

/** docs/benchmarks.md: the machine, every scenario's table, the chart, the hand-written sections kept from `existing`, and how to rerun. */
export function markdownReport(reports: readonly ScenarioReport[], run: RunDescription, existing = ''): string {
  const { machine } = run;
  const targets = targetsOf(reports);
  const lines = [
    '# Benchmarks',
    '',
    `Figures of one run of \`${run.command}\`${run.quick ? ' **in quick mode (small sizes, few samples: not comparable to a full run)**' : ''}, ` +
      `written by the run itself (bench/run.ts). Ratios are rewindable / baseline, of medians; "N× faster" is the inverse. ` +
      'Every scenario runs its baseline side by side with rewindable in the same run, on the same files. ' +
      'rewindable is measured as users import it: built by the run with the project\'s tsup configuration (bench/lib/library.ts), not run from its TypeScript sources.',
    '',
    '## Machine',
    '',
    '| | |',
    '|---|---|',
    `| CPU | ${machine.cpu} |`,
    `| cores | ${machine.cores} |`,
    `| memory | ${machine.memoryGiB} GiB |`,
    `| kernel | ${machine.kernel} |`,
    `| Node.js | ${machine.node} |`,
    `| git | ${machine.git} |`,
    `| filesystem (temp dir: projects, stores, shadow repositories) | ${machine.filesystem} |`,
    `| date | ${machine.date} |`,
    `| load average (1/5/15 min) before / after | ${run.loadBefore} / ${run.loadAfter} |`,
    `| run time | ${(run.durationSeconds / 60).toFixed(1)} min |`,
    '',
    '## Targets',
    '',
    `${targets.filter(({ row }) => verdictOf(row) === 'PASS').length} of ${targets.length} targets met in this run. Each scenario's section below says how it was measured.`,
    '',
    ...targetsTable(targets),
    '',
    '## Where a target is missed, and why',
    '',
    ...gapsOf(targets).map((gap) => `- ${gap}`),
    '',
  ];
  for (const report of reports) {
    lines.push(`## ${report.title}`, '', ...report.method.map((sentence) => `- ${sentence}`), '', ...table(report.rows), '');
    if (report.chart !== undefined && run.chartFile !== undefined) lines.push(`![${report.title}](${run.chartFile})`, '');
  }
  lines.push(
    ...handWrittenPart(existing),
    '## Rerun',
    '',
    '```sh',
    'npm ci',
    'npm run bench                       # everything, writes this file and the chart (about 23 minutes on 2 cores, 14 of them the journal scenario at up to 500,000 files)',
    'npm run bench -- --only checkpoint  # one scenario (checkpoint, edit, rewind, dry-run, store-size, memory, capture)',
    'npm run bench -- --quick            # small sizes, for working on the benchmark itself',
    '```',
    '',
    'Timings on a shared or loaded machine are noisy: compare the load averages above, and rerun on a quiet machine before drawing conclusions.',
    '',
  );
  return lines.join('\n');
}
