import { UsageError } from './exit-codes.js';

const daysPerUnit: Record<string, number> = { h: 1 / 24, d: 1, w: 7 };

/** `30d`, `12h`, `2w` or a bare number of days → days. */
export function parseDays(text: string, option: string, command: string): number {
  const match = /^(\d+(?:\.\d+)?)([hdw]?)$/.exec(text.trim());
  if (match === null) {
    throw new UsageError(`${option} takes a duration such as 30d, 12h or 2w (hours, days, weeks); got ${JSON.stringify(text)}.`, command);
  }
  return Number(match[1]) * daysPerUnit[match[2] || 'd']!;
}
