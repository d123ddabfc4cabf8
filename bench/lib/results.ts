/**
 * What a scenario reports: rows of rewindable against its baseline, each
 * with the target it must meet. Ratios are always rewindable / baseline.
 */

export type Unit = 'ms' | 'bytes' | 'MB';

export interface Figure {
  /** Who was measured: `checkpoint() durability 'none'`, `git add -A + git commit` ... */
  name: string;
  value: number;
  unit: Unit;
  /** Samples behind a median (timings). */
  samples?: number;
}

export type Target =
  /** rewindable / baseline must be at most `value`. */
  | { kind: 'ratio-at-most'; value: number }
  /** baseline / rewindable must be at least `value` ("N× faster"). */
  | { kind: 'faster-by-at-least'; value: number }
  /** rewindable's own figure must be at most `value` (no baseline). */
  | { kind: 'value-at-most'; value: number };

export interface Row {
  /** The case, e.g. "20,000 files". */
  label: string;
  rewindable: Figure;
  baseline?: Figure;
  /** Without a target the row is context (reported as "info"). */
  target?: Target;
  note?: string;
}

export interface ChartPoint {
  series: string;
  files: number;
  ms: number;
}

export interface ScenarioReport {
  id: string;
  title: string;
  /** How the scenario is run, for the reader of docs/benchmarks.md. */
  method: string[];
  rows: Row[];
  chart?: ChartPoint[];
}

export type Verdict = 'PASS' | 'MISS' | 'info';

export function ratioOf(row: Row): number | undefined {
  return row.baseline === undefined ? undefined : row.rewindable.value / row.baseline.value;
}

export function verdictOf(row: Row): Verdict {
  const target = row.target;
  if (target === undefined) return 'info';
  const ratio = ratioOf(row);
  switch (target.kind) {
    case 'ratio-at-most':
      return ratio !== undefined && ratio <= target.value ? 'PASS' : 'MISS';
    case 'faster-by-at-least':
      return ratio !== undefined && 1 / ratio >= target.value ? 'PASS' : 'MISS';
    case 'value-at-most':
      return row.rewindable.value <= target.value ? 'PASS' : 'MISS';
  }
}

export function describeTarget(target: Target | undefined, unit: Unit): string {
  if (target === undefined) return '—';
  switch (target.kind) {
    case 'ratio-at-most':
      return `≤ ${target.value}×`;
    case 'faster-by-at-least':
      return `≥ ${target.value}× faster`;
    case 'value-at-most':
      return `≤ ${formatValue(target.value, unit)}`;
  }
}

export function describeRatio(row: Row): string {
  const ratio = ratioOf(row);
  if (ratio === undefined) return '—';
  const text = ratio >= 0.1 ? ratio.toFixed(2) : ratio.toPrecision(2);
  const better = row.rewindable.unit === 'ms' ? 'faster' : 'smaller';
  return row.target?.kind === 'faster-by-at-least' || ratio < 0.5 ? `${text}× (${formatFactor(1 / ratio)}× ${better})` : `${text}×`;
}

function formatFactor(factor: number): string {
  return factor >= 100 ? Math.round(factor).toLocaleString('en-US') : factor.toFixed(1);
}

export function formatValue(value: number, unit: Unit): string {
  switch (unit) {
    case 'ms':
      return value >= 100 ? `${value.toFixed(0)} ms` : value >= 10 ? `${value.toFixed(1)} ms` : value >= 1 ? `${value.toFixed(2)} ms` : `${value.toFixed(3)} ms`;
    case 'MB':
      return `${value.toFixed(1)} MB`;
    case 'bytes':
      return value >= 1024 * 1024 ? `${(value / 1024 / 1024).toFixed(2)} MiB` : value >= 1024 ? `${(value / 1024).toFixed(1)} KiB` : `${value} B`;
  }
}

export function formatFigure(figure: Figure | undefined): string {
  if (figure === undefined) return '—';
  return formatValue(figure.value, figure.unit);
}
