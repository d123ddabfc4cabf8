/**
 * Which words of a changed line differ from its counterpart: a longest
 * common subsequence over words, spaces and punctuation, as editors
 * highlight inside a changed line.
 */

export interface Segment {
  text: string;
  changed: boolean;
}

/** Past this many token pairs a line pair is shown whole: the table would cost more than the highlight is worth. */
const maxCells = 40_000;

const tokenPattern = /\w+|\s+|[^\w\s]/gu;

export function wordDiff(before: string, after: string): { before: Segment[]; after: Segment[] } | undefined {
  const a = before.match(tokenPattern) ?? [];
  const b = after.match(tokenPattern) ?? [];
  if (a.length * b.length > maxCells) return undefined;
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const lengths = new Uint16Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lengths[i * width + j] = a[i] === b[j] ? lengths[(i + 1) * width + j + 1]! + 1 : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const left: Segment[] = [];
  const right: Segment[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      push(left, a[i++]!, false);
      push(right, b[j++]!, false);
    } else if (j < b.length && (i === a.length || lengths[i * width + j + 1]! >= lengths[(i + 1) * width + j]!)) {
      push(right, b[j++]!, true);
    } else {
      push(left, a[i++]!, true);
    }
  }
  return { before: left, after: right };
}

/** Appends `text`, merged into the last segment when it is of the same kind. */
function push(segments: Segment[], text: string, changed: boolean): void {
  const last = segments[segments.length - 1];
  if (last !== undefined && last.changed === changed) last.text += text;
  else segments.push({ text, changed });
}
