/// <reference lib="dom" />
import type { FileDiff } from '../../diff/diff-files.js';
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

/** Rows drawn before the table is shown: more than a screenful, few enough to show at once. */
const firstRows = 400;
/** Rows added per task after that, so the page stays responsive while a long diff fills in. */
const rowsPerTask = 1500;

/**
 * The patch as a table: one column of lines (unified) or the file now
 * beside the file at the checkpoint (split). A long patch is drawn in parts:
 * its first rows at once, the rest in later tasks; the table gets
 * `data-complete` once every row is in.
 */
export function diffTable(patch: string, layout: DiffLayout, hunkControl?: HunkControl): HTMLTableElement {
  const rows = diffRows(parsePatch(patch), layout, hunkControl);
  const body = h('tbody');
  const caption = layout === 'unified' ? 'Lines removed (−) and put back (+) by a rewind' : 'The file now (left) and at the checkpoint (right)';
  // Column widths come from here: with a fixed layout, the first row (a hunk's header, one wide cell) would share them out evenly.
  const columns = layout === 'unified' ? ['number', 'number', 'sign', 'code'] : ['number', 'code', 'number', 'code'];
  const colgroup = h('colgroup', {}, columns.map((name) => h('col', { class: name })));
  const table = h('table', { class: `diff ${layout}` }, h('caption', { class: 'visually-hidden' }, caption), colgroup, body);
  let shown = false;
  const fill = (count: number): void => {
    // A table taken out of the page (the reader moved on) is not filled any further.
    if (shown && !table.isConnected) return;
    shown ||= table.isConnected;
    const fragment = document.createDocumentFragment();
    for (let index = 0; index < count; index += 1) {
      const next = rows.next();
      if (next.done) {
        body.appendChild(fragment);
        table.dataset.complete = 'true';
        performance.mark('rewindable:diff-complete');
        return;
      }
      fragment.appendChild(next.value);
    }
    body.appendChild(fragment);
    setTimeout(() => fill(rowsPerTask), 0);
  };
  fill(firstRows);
  return table;
}

/** What a hunk's header row holds before its `@@` line: the hunk's toggle, given its index in the patch and its header. */
export type HunkControl = (index: number, header: string) => Node | undefined;

function* diffRows(hunks: readonly DisplayHunk[], layout: DiffLayout, hunkControl: HunkControl | undefined): Generator<HTMLTableRowElement> {
  for (const [index, hunk] of hunks.entries()) {
    yield h('tr', { class: 'hunk' }, h('td', { colspan: 4 }, hunkControl?.(index, hunk.header), hunk.header));
    yield* layout === 'unified' ? unifiedRows(hunk) : splitRows(hunk);
  }
}

function* unifiedRows(hunk: DisplayHunk): Generator<HTMLTableRowElement> {
  for (const part of changeRuns(hunk.lines)) {
    if (!('removed' in part)) {
      yield unifiedRow(part, [{ text: part.text, changed: false }]);
      continue;
    }
    const words = pairWords(part.removed, part.added);
    for (const [index, line] of part.removed.entries()) yield unifiedRow(line, words(index)?.before ?? whole(line));
    for (const [index, line] of part.added.entries()) yield unifiedRow(line, words(index)?.after ?? whole(line));
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

function* splitRows(hunk: DisplayHunk): Generator<HTMLTableRowElement> {
  for (const part of changeRuns(hunk.lines)) {
    if (!('removed' in part)) {
      const segments = [{ text: part.text, changed: false }];
      yield h('tr', { class: 'context' }, ...side(part, segments, 'oldNumber'), ...side(part, segments, 'newNumber'));
      continue;
    }
    const words = pairWords(part.removed, part.added);
    for (let index = 0; index < Math.max(part.removed.length, part.added.length); index += 1) {
      const removed = part.removed[index];
      const added = part.added[index];
      yield h(
        'tr',
        { class: 'change' },
        ...(removed !== undefined ? side(removed, words(index)?.before ?? whole(removed), 'oldNumber') : empty()),
        ...(added !== undefined ? side(added, words(index)?.after ?? whole(added), 'newNumber') : empty()),
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

/**
 * Word diffs of the run's removed and added lines, paired in order, each
 * computed when its row is drawn; a line without a counterpart is shown whole.
 */
function pairWords(removed: readonly PatchLine[], added: readonly PatchLine[]): (index: number) => ReturnType<typeof wordDiff> {
  const computed = new Map<number, ReturnType<typeof wordDiff>>();
  return (index) => {
    if (index >= Math.min(removed.length, added.length)) return undefined;
    if (!computed.has(index)) computed.set(index, wordDiff(removed[index]!.text, added[index]!.text));
    return computed.get(index);
  };
}

function whole(line: PatchLine): Segment[] {
  return [{ text: line.text, changed: false }];
}
