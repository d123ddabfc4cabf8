import { commonPrefixLength, commonSuffixLength } from '../util/byte-compare.js';

/**
 * Exact line statistics, as `git diff --no-index --numstat <current> <target>`
 * reports them: the number of lines a minimal line diff adds and removes.
 * Git's diff is minimal too except where its heuristics step in (lines that
 * occur many times amid changed ones are set aside; very costly diffs are
 * cut short): there it counts more on both sides, never fewer.
 *
 * insertions + deletions = |current| + |target| - 2 * LCS(current, target),
 * and for a minimal diff insertions = |target| - LCS, deletions = |current| - LCS.
 * So only the length of the longest common subsequence is needed, which
 * Myers' greedy algorithm finds in O((N + M) * D) time and O(N + M) space.
 * Before it runs, common leading and trailing lines are cut, and lines that
 * occur on one side only are counted and dropped (they can never be common).
 */

export interface LineStats {
  insertions: number;
  deletions: number;
  binary: boolean;
  /** The diff was too costly to finish within the bound; counts are 0 and not exact. */
  skipped: boolean;
}

export interface LineStatsOptions {
  /**
   * Upper bound on the work of the diff (inner-loop steps). Past it the file
   * is reported with `skipped: true` instead of hanging on pathological input.
   * @default 50_000_000
   */
  maxSteps?: number;
}

/** Git's rule: a NUL byte among the first 8000 bytes makes a file binary. */
export function isBinary(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 8000)).indexOf(0) !== -1;
}

/** Lines in a file, counting a last line without a newline. */
export function countLines(bytes: Uint8Array): number {
  if (bytes.length === 0) return 0;
  let lines = 0;
  let index = -1;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while ((index = buffer.indexOf(0x0a, index + 1)) !== -1) lines += 1;
  // One addition on every path: an addition only some files reach had no type feedback when the
  // function was optimized, and each file without a final newline deoptimized it again.
  return lines + (bytes[bytes.length - 1] === 0x0a ? 0 : 1);
}

/** Statistics of turning `current` into `target` (`undefined` means the file does not exist). */
export function lineStats(current: Uint8Array | undefined, target: Uint8Array | undefined, options: LineStatsOptions = {}): LineStats {
  const before = current ?? new Uint8Array(0);
  const after = target ?? new Uint8Array(0);
  if (isBinary(before) || isBinary(after)) return { insertions: 0, deletions: 0, binary: true, skipped: false };
  if (before.length === 0 || after.length === 0) {
    return { insertions: countLines(after), deletions: countLines(before), binary: false, skipped: false };
  }
  // Whole lines the two share at both ends are common to every diff: only the middle is split and diffed.
  const edges = commonLineEdges(before, after);
  const a = splitLines(before.subarray(edges.prefix, before.length - edges.suffix));
  const b = splitLines(after.subarray(edges.prefix, after.length - edges.suffix));
  const common = lcsLength(a, b, options.maxSteps ?? 50_000_000);
  if (common === undefined) return { insertions: 0, deletions: 0, binary: false, skipped: true };
  // The shared ends are whole lines on both sides, so they drop out: what the middle adds and removes is all.
  return { insertions: b.length - common, deletions: a.length - common, binary: false, skipped: false };
}

/**
 * Bytes of whole lines `a` and `b` share at the start and at the end (each
 * cut back to a line boundary in both files).
 */
function commonLineEdges(a: Uint8Array, b: Uint8Array): { prefix: number; suffix: number } {
  let prefix = commonPrefixLength(a, b);
  if (prefix < a.length || prefix < b.length) {
    // Back up to just after the last newline both share: the line in progress differs.
    prefix = Buffer.from(a.buffer, a.byteOffset, prefix).lastIndexOf(0x0a) + 1;
  }
  let suffix = commonSuffixLength(a, b, Math.min(a.length, b.length) - prefix);
  const startsLine = (bytes: Uint8Array, at: number) => at === prefix || bytes[at - 1] === 0x0a;
  if (suffix > 0 && !(startsLine(a, a.length - suffix) && startsLine(b, b.length - suffix))) {
    // Move forward to the first line start inside the shared end.
    const shared = Buffer.from(a.buffer, a.byteOffset + a.length - suffix, suffix);
    const newline = shared.indexOf(0x0a);
    suffix = newline === -1 ? 0 : suffix - newline - 1;
  }
  return { prefix, suffix };
}

function splitLines(bytes: Uint8Array): string[] {
  // latin1 maps bytes one to one: fast, and equal strings mean equal bytes.
  return splitTextLines(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
}

/** Lines with their terminators (so a missing final newline is a difference, as in git). */
export function splitTextLines(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', start)) {
    lines.push(text.slice(start, index + 1));
    start = index + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/** `a` and `b` share no first or last line: `commonLineEdges` cut those. */
function lcsLength(a: string[], b: string[], maxSteps: number): number | undefined {
  const ids = new Map<string, number>();
  const seenIn = new Map<number, number>(); // bit 1: in a, bit 2: in b
  const intern = (lines: string[], flag: number) => {
    const out = new Int32Array(lines.length);
    for (let index = 0; index < out.length; index += 1) {
      const line = lines[index]!;
      let id = ids.get(line);
      if (id === undefined) {
        id = ids.size;
        ids.set(line, id);
      }
      seenIn.set(id, (seenIn.get(id) ?? 0) | flag);
      out[index] = id;
    }
    return out;
  };
  const idsA = intern(a, 1);
  const idsB = intern(b, 2);
  const shared = (sequence: Int32Array) => sequence.filter((id) => seenIn.get(id) === 3);
  return myersLcs(shared(idsA), shared(idsB), maxSteps);
}

function myersLcs(a: Int32Array, b: Int32Array, maxSteps: number): number | undefined {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) return 0;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  let steps = 0;
  for (let d = 0; d <= max; d += 1) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x += 1;
        y += 1;
        steps += 1;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return (n + m - d) / 2;
    }
    steps += d + 1;
    if (steps > maxSteps) return undefined;
  }
  return 0;
}
