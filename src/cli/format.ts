import path from 'node:path';
import { isInside } from '../paths.js';

/** `1536` → `1.5 KiB`: binary units, one decimal below 10. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  if (unit === 0) return `${bytes} B`;
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** An ISO time as `YYYY-MM-DD HH:MM:SS` in the local time zone: sortable and short. Text that is no time (from a damaged lock) is shown as it is. */
export function formatTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const two = (value: number) => String(value).padStart(2, '0');
  return (
    `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ` +
    `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`
  );
}

/** A path under the project as the user would type it from the project root; others stay absolute. */
export function displayPath(file: string, root: string): string {
  return isInside(file, root) ? path.relative(root, file) : file;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * Left-aligned columns separated by two spaces. Cells are padded before they
 * are styled, so colour codes never upset the alignment.
 */
export function formatTable(header: string[], rows: string[][], styleHeader: (text: string) => string, styleCell?: (row: number, column: number, text: string) => string): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[], style: (column: number, text: string) => string) =>
    cells
      .map((cell, column) => style(column, column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header, (_column, text) => styleHeader(text)), ...rows.map((row, index) => line(row, (column, text) => styleCell?.(index, column, text) ?? text))].join('\n');
}

/** The first line of a text that has any, trimmed: how a prompt is named in one row. */
export function firstLine(text: string): string {
  return text.split(/\r?\n/).map((line) => line.trim()).find((line) => line !== '') ?? '';
}

/** `text` in at most `width` characters, cut with an ellipsis. */
export function shorten(text: string, width: number): string {
  const characters = [...text];
  return characters.length <= width ? text : `${characters.slice(0, Math.max(1, width - 1)).join('')}…`;
}
