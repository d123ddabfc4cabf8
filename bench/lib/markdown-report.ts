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
        `| ${escape(report.title)} (${report.source}) | ${escape(row.label)}: ${escape(row.rewindable.name)} | ` +
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
      'Rewind of 1,000 files against `git checkout` (issue 9, item 3): rewindable replaces each file atomically, a temporary file renamed over the old one, so a reader or a crash sees the old bytes or the new ones, never a mix (SPEC 5.3); `git checkout` unlinks each file and creates it again (strace: `lstat`, `unlink`, `open` with `O_EXCL`, `write`), which a crash can leave empty or half-written. ' +
      'Both take a new inode per file and free the old one. On this machine\'s ext4, mounted without a journal, creating a file skips every free inode of its block group that was freed in the last few minutes (`recently_deleted` under `ext4_create` is the top kernel symbol in `perf`), so creates slow down with the recent deletions of anyone on the filesystem: the same loop of 1,000 temporary-file writes used 97 ms of system time in one run and 327 ms in the next, unlink-and-create 86 and 268 ms, in-place writes 81 and 38 ms. ' +
      'The writes of a large rewind run on four worker threads, each file still checked just before its write; on this 2-core machine four threads finished 10–20% sooner than two. ' +
      'Before the first write the plan must know that every file\'s current bytes are in the store (the undo point) and log the plan, as the transaction requires. ' +
      'A file whose stat signature vouches for content the store already holds (the usual case: the checkpoint of the message asking to rewind stored it) is not read then; it is read, for its statistics, just before its own write, while the workers write the ones before. ' +
      'Since the racy window follows the filesystem (50 ms on ext4 instead of 2 s), the workers do not read and hash the files again either. ' +
      'What remains is the kernel work of the atomic writes: counted per thread over a rewind, the worker threads spend 400–600 ms of system time for the 1,000 files, where git\'s whole checkout uses 70–120 ms; that work is shared between both cores and grows with the filesystem\'s recent deletions, so the ratio moves with the other tenants\' load. ' +
      'Full runs of nearly the same code have measured 0.70–1.23× (0.98× and 0.71× on one evening, after 1.23× the day before); the full run that wrote this page is in the table.',
  },
  {
    report: 'capture',
    label: 'rewind',
    text:
      'Capture rewind (issue 6): the plan checks every path of the scope with one batch of plain `lstat` calls, as `git checkout` checks its index, and settles untouched paths without further work; the batch runs on two worker threads from 8,192 paths on (over the real tree\'s 3,538 paths, this thread alone planned in 73–74 ms against 85–93 ms with workers, medians of alternating rewinds; over 20,000 the workers won, 155 ms against 212). ' +
      'The targets of the changed files are the first scan\'s versions, which live in 128 KiB compressed bundles. With changes spread over the tree, as the benchmark\'s random edits are, reading them inflated most bundles: 9.7 MB of inflation for the 169 files of the real tree. ' +
      'So when a file changes, its previous version (inflated anyway, to store the new version as a delta against it) is stored again, compressed on its own, and read from there: the same rewind then inflates 1.9 MB, most of it for the deleted files, whose versions stay in their bundles. In a script that rewound the real tree took 150–195 ms instead of 239–316 ms (git: 128–187 ms), and the store grew 5%. ' +
      'Such a bundle of one is inflated for its one member into a buffer of its own, neither kept in the bundle cache (where it pushed out the shared bundles other members need) nor copied out of it: the target reads of the real tree, 152 files and 3.85 MB, took 21–38 ms per rewind instead of 36–47 ms. ' +
      'What is left, by profile over six rewinds of the real tree: the `lstat` of every path (about 23 ms, where git\'s C loop needs a few), inflating those 3.85 MB (6 ms when warm, up to 27 ms in a rewind that follows a pause), handing the bytes to the writing threads (about 18 ms), the atomic writes of the changed files (see the rewind of 1,000 files) and garbage collection: `--trace-gc` shows scavenges of 12–19 ms and a mark-compact of about 20 ms in most rewinds. ' +
      'Reading the bundles on the thread pool with read-ahead was measured first and not built: 147 inflations on the pool took longer (12–34 ms) than on this thread (6–22 ms). ' +
      'Paths the glance settles (still as last seen, already at their target) no longer get an object each in the plan, nor a second pass to find they hold nothing new for the undo point: on the generated tree that pass went from 2–10 ms to under 1, and garbage collection has fewer survivors to copy. ' +
      'Bundles of 32 KiB would cut the inflation of the deleted files\' versions too, but they grew the store by 7–9% and, measured earlier, slowed the first scan, so they were not kept. ' +
      'Measured since, over nine rewinds of the real tree in a script: rewindable\'s threads used 219–244 ms of processor time per rewind (user 122–170, system 85–105) where git\'s two processes used 90–100 ms; on two cores that is the gap. Three causes, none of them waiting: ' +
      '(1) Exact line statistics need the current bytes of every changed file, which `git checkout` never reads: here 161 files, opened and read in about 20 ms of the plan. As the rewind before wrote them, their timestamps are too fresh to vouch for them, so they are hashed as well (about 2 ms; SPEC 4: a file modified within the timestamp granularity of its recorded stat is re-read, where git trusts any entry older than its index file). ' +
      '(2) Node\'s `lstatSync` costs 5.1 µs a call over the tree\'s 3,538 paths when warm (12.5 µs cold), a C loop 2.7 µs. ' +
      '(3) About 3,000–3,500 page faults per rewind (perf), each 13–18 µs on this virtual machine (a C loop touching fresh pages): fresh buffers for the reads, the inflation and the batches handed to the writing threads, and memory the allocator gives back between rewinds. ' +
      'Tried and not kept: reading the targets ahead on this thread while two workers did the lstats: the plan took 92–110 ms instead of 64–83 and the rewind was no faster, the three threads sharing two cores. ' +
      'Measured later, in a script that alternated two versions rewind by rewind over the real tree: a pool of buffers kept across rewinds for the batches handed to the writing threads did not lower the page faults (about 285 per rewind on this thread, against 214 with fresh buffers), nor did a shelf of them in the benchmark itself (4,107 against 4,010 per rewind, alternating rounds), although memory a process keeps does not fault again after a pause (8 MB written again after 2.1 and 5 s of sleep: no faults; 8 MB freshly allocated: 2,050 faults, 25–27 ms), so the batches are a small share of the faults; ' +
      'reading the changed files into one reused buffer saved about 360 faults per rewind, but reading them again for the statistics cost as much (medians of 185 and 180 ms over ten rewinds each); and the read-ahead above, tried again, was slower (181 against 165 ms, with about 1,000 more page faults). ' +
      'Rewinds are rare, so V8 optimizes their functions over several of them: in each of a script\'s fourth to sixth rewinds, 7–10 functions were compiled anew (the apply loop in 96 ms of compiler time), on the same two cores as the writes. Also not kept: storing a changed file\'s previous version uncompressed, so that a rewind reads it without inflating it: 186 ms against 176 ms compressed (git 188 ms; medians of eleven rewinds each, side by side), and a store 15% larger. Tried once more, with the changed files whose timestamps are too fresh to vouch for them also planned on this thread while one or two workers did the lstats (from 1,024 paths on): 218 against 202 ms over the real tree and 225 against 229 ms over the generated one (medians, alternating rewind by rewind), so it was not kept either. Run on its own (`npm run bench -- --only capture`), the scenario measured 0.95× on the generated tree (291 against 306 ms) and 1.32× on the real one (242 against 183 ms): the misses do not come from the scenarios that run before it in the same process. ' +
      'Since then, a bundle\'s layout (where its compressed bytes start, how long they inflate) is kept from its table when the pack is opened or the bundle written, so reading a member is one read of the file instead of three: in a script, reading the targets went from 30–35 ms to 17–25 ms per rewind of the real tree. ' +
      'Measured and not kept: verifying the undo rewind\'s writes once they have aged (a read in the background, so that the next rewind trusts their signatures) took the plan\'s reads from about 20 ms to 3 and the rewind from 135 to 127 ms (git 133; medians of alternating rewinds), too little for work done behind the caller\'s back; the lstats on workers from 1,024 paths, inside the benchmark\'s process: 168 against 151 ms (alternating rounds). ' +
      'In a script of its own (one session in the process), the real tree\'s rewind measured 127–170 ms against git\'s 132–197 ms; in the benchmark\'s process, which holds two sessions and the garbage of the earlier phases (66–110 MB of heap in use during the real tree\'s rewinds, 127 MB live after a mark-compact during the generated tree\'s), scavenges inside a timed rewind took 9–31 ms each, and the generated tree\'s first two rounds took 440–590 ms against 260–300 ms for the later ones. Two full runs of this code on one evening: 1.03× and 0.99× on the generated tree, 1.16× and 1.05× on the real one. Later, one more read-ahead, on a worker thread of its own started before the lstats (151 of the 171 targets found ready): reading the targets and counting their statistics on this thread went from 25–59 ms to 16–35 ms per rewind, and the rewind was no faster (146 against 147 ms, medians of alternating rewinds), because the work only moved from one of the two busy cores to the other. The atomic writes of those 171 files alone, fed by a script with nothing else to do, took 55–60 ms (medians) whether two, three or four threads wrote them, and each 0.15 ms of other work per file on this thread added about 0.2 ms to them. ' +
      'Since then, with `node --trace-deopt`: counting a file\'s lines deoptimized that function about 100 times per rewind of the real tree (an addition reached only by files without a final newline had no type feedback, and V8 kept the optimized code, so every such file dropped back to the interpreter); it now adds on every path. The capture walk\'s `map` over a 20,000-file scope deoptimized at every scan; it is now a loop. Compressed bytes are read into one kept buffer before they are inflated, and the batches for the writing threads are no longer zero-filled before the bytes are copied in. Compiling the rewind\'s functions (TurboFan, on V8\'s own threads) took about a tenth of the processor samples over eight rounds (`perf`, the process and its git children), on the same two cores. Four writing threads still beat two over the whole rewind: 0.89× and 0.95× against 1.13× and 1.06× (two scripts each, ten alternating rounds). In scripts of this code, the real tree\'s rewind measured 0.99×, 1.09×, 0.89× and 0.95× of git. ' +
      'Later still: the last content of the few files a scan finds deleted is stored on its own too (the `expectReads` hint of the store), as a changed file\'s previous version is, so the real tree\'s rewind no longer inflates 14 bundles (about 0.9 MB) for its 19 deleted files; deletions run on the writing threads like the restores (their 19 unlinks had taken 9 ms on this thread; 126 against 138 ms, alternating in a script); the writing threads start before the plan instead of at the first write (a process\'s first rewind of the real tree: its apply step 133 instead of 281 ms); and the scenario times seven rewinds instead of five. ' +
      'With these, `--only capture` measured 0.86× on the generated tree and 1.10× on the real one (147 against 134 ms), while scripts rewinding the same real tree, with edits spread the same way, measured 0.75–0.93× (medians of alternating rounds): there git\'s side took 125–199 ms, in the benchmark\'s process 115–135 ms, and rewindable\'s about the same in both (125–150 ms). Where that difference comes from was not found. ' +
      'Since then, a process\'s first rewind of fewer than 256 files writes them on this thread and starts the writing threads after it, which then warm up in a scratch directory: booting four V8s on the same two cores had slowed its lstats and its plan. In separate processes the real tree\'s first rewind took 220–248 ms instead of 316–335 ms, and the rounds after it took 123–176 ms against 133–149 ms. Measured on 2026-12-01 in a script over ten rounds of the real tree: rewindable\'s threads used 190–215 ms of processor time per rewind against git\'s 93–119 ms, and 59 ms of it was V8\'s own threads (TurboFan still compiling 5–29 of the rewind\'s functions per round in rounds two to eight, and concurrent marking); a scavenge fell inside about half the timed rewinds (7–29 ms), but the rounds without one were not consistently faster. Two full runs that day measured 1.02× and 1.08× on the real tree (git 123 ms both times) and 0.75× on the generated one both times.',
  },
  {
    report: 'edit',
    text:
      'Tracked Edit, first edit of a file (issue 9, item 2): tracking adds hashing the file and the bytes written, one append to the pack kept open (header and bytes in one `writev`), and one log append that holds both the first-backup record and the record of the write it is taken for. No file is created per backup. ' +
      'Most of an Edit\'s time is creating its temporary file and renaming it over the old one, which the untracked Edit does too. On this machine\'s ext4 (no journal) a create skips the free inodes its block group freed in the last few minutes, so it costs more or less depending on what was deleted near the directory lately; all contenders\' files share one directory for that reason. The ratio moves with it: partial runs of this scenario on one afternoon measured 1.06–1.53× as the untracked Edit took 0.53–1.05 ms. ' +
      'Where the tracking time goes, from timing probes inside three runs of this scenario: reading the file\'s state and hashing it 22–27 µs, the records and the hash of the new bytes 27–35 µs, the pack append 48–70 µs (its `writev` about 21), encoding the two log lines 22–32 µs and writing them 9–14, applying the records to the session\'s state 16–24, the queue and the rest about 10: 150–210 µs. ' +
      'The steps the untracked Edit does too took 60–130 µs longer in the tracked contender (the rename 12–21 µs, the summary 11–24, the steps before tracking starts 22–51), as if they ran on colder caches. ' +
      'All of it takes half that or less in a script that runs a thousand Edits: this scenario runs the tracking code about 130 times, and `--trace-opt` shows none of its functions optimized in a run; a session of a few hundred Edits runs it about as often. ' +
      'Recent changes: log timestamps no longer go through `toISOString` (it consults the time zone tables on every call), pack headers are slices of the shared buffer pool, a tool\'s backup reaches the pack without a batch or an await, log lines are encoded straight into one buffer, and asking for the open session adds no async frames. In a script alternating both versions with untracked Edits (warm code) that was about 45 µs less per tracked Edit; in a copy of this scenario running both versions side by side (240 samples each, four runs) the difference was −27 to +46 µs, within the noise. ' +
      'Measured and not kept: creating the temporary file on the thread pool while the backup is taken. A create on the pool cost 51 µs against 12 µs on this thread in a loop, and a whole create, write, close and rename 865 µs against 637 µs. Run on its own (`npm run bench -- --only edit`), the \'none\' ratio was 1.32× (1.26 against 0.96 ms), and 1.41× after the checkpoint scenario (0.872 against 0.617 ms); in a script that ran 1,500 Edits in each of two processes, one tracked and one untracked, 0.737 against 0.667 ms (1.10×, medians of the last 1,200). Two full runs of the same code on one evening measured 1.43× (0.785 against 0.549 ms) and 1.75× (1.12 against 0.638 ms).',
  },
  {
    report: 'checkpoint',
    label: '20,000 files',
    text:
      'Per-turn checkpoint at 20,000 files (issue 9, item 1): rewindable\'s checkpoint does not grow with the project (it looks only at the 20 tracked files: a plain `lstat` of each, then a read, hash and backup of the 5 changed ones, one pack append and one log append; strace counts 91 system calls, 53 of them `statx`), so the ratio follows git\'s own time and rewindable\'s few milliseconds, both of which move with the machine\'s load: full runs have measured git at 229–281 ms and rewindable at 4.5–6.2 ms, 40.3–61.0× in all. ' +
      'The same checkpoint takes about 2 ms when the processor has just been busy, and 3.3–3.5 ms right after a 2-second pause, as in the benchmark\'s realistic turns: in a script, eight checkpoints after a pause had a median of 3.45 ms, eight after a 50 ms busy loop 1.85 ms. In one instrumented run of the benchmark, its \'none\' checkpoint had a median of 4.1 ms (2.8–5.0) when it came first after the pause and 2.9 ms when it followed the \'full\' one. ' +
      'An idle virtual processor comes back with cold caches, and a checkpoint is a few milliseconds of many small steps; git pays the same once in 200 ms. The pack append is now one `writev` however many files changed (five before, one per backup).',
  },
  {
    report: 'capture',
    label: 'incremental',
    text:
      'Incremental capture scans (issue 6): every file in scope is `lstat`ed each turn, as git does for its index. Directory listings are reused while a directory is unchanged, `.gitignore` verdicts while the rules are, and unchanged files are decided by a plain lstat compared as numbers; the scan lands below git\'s cost in most runs, near it in loaded ones.',
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
    'Ratios near a target (the 50× checkpoint, the 1.5× tracked Edit, the capture scans and rewinds) move by 10–25% between runs with the machine\'s load; the tables here are one full run, as the issue asks.',
  ];
}

/** The Benchmarks section of README.md: the machine, the targets of this run, the chart, how to rerun. */
export function readmeSection(reports: readonly ScenarioReport[], run: RunDescription): string {
  const { machine } = run;
  const targets = targetsOf(reports);
  const passed = targets.filter(({ row }) => verdictOf(row) === 'PASS').length;
  return [
    `<!-- Written by \`${run.command}\` (bench/run.ts): rerun it, do not edit this text. -->`,
    `One run of \`${run.command}\` on ${machine.cpu}, ${machine.cores} cores, Node.js ${machine.node}, git ${machine.git}, ${machine.filesystem}, ` +
      `${machine.date.slice(0, 10)}${run.quick ? ' (quick mode: small sizes, not comparable to a full run)' : ''}: ${passed} of ${targets.length} targets met. Ratios are rewindable / baseline, of medians, each scenario side by side with its baseline in one run. ` +
      'Method, every figure and where and why targets are missed: [docs/benchmarks.md](docs/benchmarks.md).',
    '',
    ...targetsTable(targets),
    '',
    ...(run.chartFile === undefined ? [] : [`![Per-turn checkpoint cost against project size](docs/${run.chartFile})`, '']),
    'Rerun: `npm run bench` (about 10 minutes on 2 cores; writes docs/benchmarks.md, the chart and this section), or `npm run bench -- --only checkpoint,rewind` for some scenarios.',
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

/** docs/benchmarks.md: the machine, every scenario's table, the chart, and the closing list of targets. */
export function markdownReport(reports: readonly ScenarioReport[], run: RunDescription): string {
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
    lines.push(`## ${report.title} (${report.source})`, '', ...report.method.map((sentence) => `- ${sentence}`), '', ...table(report.rows), '');
    if (report.chart !== undefined && run.chartFile !== undefined) lines.push(`![${report.title}](${run.chartFile})`, '');
  }
  lines.push(
    '## Rerun',
    '',
    '```sh',
    'npm ci',
    'npm run bench                       # everything, writes this file and the chart (about 10 minutes on 2 cores)',
    'npm run bench -- --only checkpoint  # one scenario (checkpoint, edit, rewind, dry-run, store-size, memory, capture)',
    'npm run bench -- --quick            # small sizes, for working on the benchmark itself',
    '```',
    '',
    'Timings on a shared or loaded machine are noisy: compare the load averages above, and rerun on a quiet machine before drawing conclusions.',
    '',
  );
  return lines.join('\n');
}
