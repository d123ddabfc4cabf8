/// <reference lib="dom" />
import type { FileDiff } from '../../rewind/diff.js';
import { h } from './dom.js';
import { changeRuns, parsePatch, type DisplayHunk, type PatchLine } from './patch-lines.js';
import { wordDiff, type Segment } from './word-diff.js';

export type DiffLayout = 'unified' | 'split';

/** Why a file has no text diff to show, or undefined when it has one. */
export function noTextDiff(file: FileDiff): string | undefined {
  if (file.action === 'skip') return `Left alone: ${file.message}`;
  if (file.binary) return 'Binary file: no text diff to show.';
  if (file.tooLarge) return 'Too large to show: a side is over 1 MiB. The line counts are still exact.';
  if (file.tooComplex) return 'Too complex to show: the line diff gave up. The line counts are still exact.';
  if (file.action === 'chmod') return 'Only the permission bits change.';
  if (file.patch === undefined || !file.patch.includes('\n@@ ')) return 'No lines to show (an empty file, or only its mode).';
  return undefined;
}

/** The patch as a table: one column of lines (unified) or the file now beside the file at the checkpoint (split). */
export function diffTable(patch: string, layout: DiffLayout): HTMLTableElement {
  const hunks = parsePatch(patch);
  const body = h('tbody');
  const fragment = document.createDocumentFragment();
  for (const hunk of hunks) {
    fragment.appendChild(h('tr', { class: 'hunk' }, h('td', { colspan: 4 }, hunk.header)));
    if (layout === 'unified') unifiedRows(hunk, fragment);
    else splitRows(hunk, fragment);
  }
  body.appendChild(fragment);
  const caption = layout === 'unified' ? 'Lines removed (−) and put back (+) by a rewind' : 'The file now (left) and at the checkpoint (right)';
  // Column widths come from here: with a fixed layout, the first row (a hunk's header, one wide cell) would share them out evenly.
  const columns = layout === 'unified' ? ['number', 'number', 'sign', 'code'] : ['number', 'code', 'number', 'code'];
  const colgroup = h('colgroup', {}, columns.map((name) => h('col', { class: name })));
  return h('table', { class: `diff ${layout}` }, h('caption', { class: 'visually-hidden' }, caption), colgroup, body);
}

function unifiedRows(hunk: DisplayHunk, into: DocumentFragment): void {
  for (const part of changeRuns(hunk.lines)) {
    if (!('removed' in part)) {
      into.appendChild(unifiedRow(part, [{ text: part.text, changed: false }]));
      continue;
    }
    const words = pairWords(part.removed, part.added);
    part.removed.forEach((line, index) => into.appendChild(unifiedRow(line, words[index]?.before ?? whole(line))));
    part.added.forEach((line, index) => into.appendChild(unifiedRow(line, words[index]?.after ?? whole(line))));
  }
}

function unifiedRow(line: PatchLine, segments: Segment[]): HTMLTableRowElement {
  const sign = line.kind === 'removed' ? '−' : line.kind === 'added' ? '+' : ' ';
  return h(
    'tr',
    { class: line.kind },
    h('td', { class: 'number' }, line.oldNumber !== undefined ? String(line.oldNumber) : ''),
    h('td', { class: 'number' }, line.newNumber !== undefined ? String(line.newNumber) : ''),
    h('td', { class: 'sign', 'aria-hidden': 'true' }, sign),
    code(segments, line.kind),
  );
}

function splitRows(hunk: DisplayHunk, into: DocumentFragment): void {
  for (const part of changeRuns(hunk.lines)) {
    if (!('removed' in part)) {
      const segments = [{ text: part.text, changed: false }];
      into.appendChild(h('tr', { class: 'context' }, ...side(part, segments, 'oldNumber'), ...side(part, segments, 'newNumber')));
      continue;
    }
    const words = pairWords(part.removed, part.added);
    for (let index = 0; index < Math.max(part.removed.length, part.added.length); index += 1) {
      const removed = part.removed[index];
      const added = part.added[index];
      into.appendChild(
        h(
          'tr',
          { class: 'change' },
          ...(removed !== undefined ? side(removed, words[index]?.before ?? whole(removed), 'oldNumber') : empty()),
          ...(added !== undefined ? side(added, words[index]?.after ?? whole(added), 'newNumber') : empty()),
        ),
      );
    }
  }
}

function side(line: PatchLine, segments: Segment[], number: 'oldNumber' | 'newNumber'): HTMLTableCellElement[] {
  const value = line[number];
  return [h('td', { class: 'number' }, value !== undefined ? String(value) : ''), code(segments, line.kind)];
}

function empty(): HTMLTableCellElement[] {
  return [h('td', { class: 'number' }), h('td', { class: 'code blank' })];
}

/** The line's text, with the words that differ from its counterpart marked. */
function code(segments: Segment[], kind: PatchLine['kind']): HTMLTableCellElement {
  const cell = h('td', { class: `code ${kind}` });
  for (const segment of segments) {
    if (!segment.changed) cell.appendChild(document.createTextNode(segment.text));
    else cell.appendChild(h(kind === 'removed' ? 'del' : 'ins', {}, segment.text));
  }
  return cell;
}

/** Word diffs of the run's removed and added lines, paired in order; a line without a counterpart is shown whole. */
function pairWords(removed: readonly PatchLine[], added: readonly PatchLine[]): Array<{ before: Segment[]; after: Segment[] } | undefined> {
  const pairs = Math.min(removed.length, added.length);
  return Array.from({ length: pairs }, (_, index) => wordDiff(removed[index]!.text, added[index]!.text));
}

function whole(line: PatchLine): Segment[] {
  return [{ text: line.text, changed: false }];
}
