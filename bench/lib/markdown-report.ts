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

/** docs/benchmarks.md: the machine, every scenario's table, the chart, and the closing list of targets. */
export function markdownReport(reports: readonly ScenarioReport[], run: RunDescription): string {
  const { machine } = run;
  const targets = reports.flatMap((report) => report.rows.filter((row) => row.target !== undefined).map((row) => ({ report, row })));
  const lines = [
    '# Benchmarks',
    '',
    `Figures of one run of \`${run.command}\`${run.quick ? ' **in quick mode (small sizes, few samples: not comparable to a full run)**' : ''}, ` +
      `written by the run itself (bench/run.ts). Ratios are rewindable / baseline, of medians; "N× faster" is the inverse. ` +
      'Every scenario runs its baseline side by side with rewindable in the same run, on the same files.',
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
    '| scenario | case | ratio (or value) | target | result |',
    '|---|---|--:|---|---|',
    ...targets.map(
      ({ report, row }) =>
        `| ${escape(report.title)} (${report.source}) | ${escape(row.label)}: ${escape(row.rewindable.name)} | ` +
        `${row.baseline === undefined ? formatFigure(row.rewindable) : describeRatio(row)} | ${describeTarget(row.target, row.rewindable.unit)} | **${verdictOf(row)}** |`,
    ),
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
