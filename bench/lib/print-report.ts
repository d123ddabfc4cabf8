import { describeRatio, describeTarget, formatFigure, verdictOf, type ScenarioReport } from './results.js';

/** The scenario's rows as an aligned text table, for the terminal. */
export function printReport(report: ScenarioReport): string {
  const header = ['case', 'rewindable', 'median', 'baseline', 'median', 'ratio', 'target', 'result'];
  const lines = report.rows.map((row) => [
    row.label,
    row.rewindable.name,
    formatFigure(row.rewindable),
    row.baseline?.name ?? '—',
    formatFigure(row.baseline),
    describeRatio(row),
    describeTarget(row.target, row.rewindable.unit),
    verdictOf(row),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join('  ');
  return [`\n## ${report.title}`, format(header), format(widths.map((width) => '-'.repeat(width))), ...lines.map(format)].join('\n');
}
