import { diffArrays } from 'diff';
import { sha256 } from '../hash.js';
import { splitTextLines } from './line-stats.js';

/**
 * The line diff behind a file's patch, cut into change blocks: the runs of
 * removed and added lines between two kept lines. A patch's hunk is one
 * block or several blocks merged because their context lines touch, so a
 * hunk is named by its blocks, and applying chosen hunks is applying their
 * blocks. No I/O: bytes in, bytes out.
 *
 * Lines are latin1 strings that keep their line ending: latin1 maps each byte
 * to one character, so equal strings are equal bytes, CRLF and a missing
 * final newline are part of a line, and bytes that are not UTF-8 survive.
 */

/** Bounds of one line diff; past either, there is no diff (`undefined`). */
export interface LineDiffBounds {
  /** Milliseconds the diff may take. @default 1000 */
  timeoutMs?: number;
  /** Largest edit, in lines added plus removed, among the lines both sides share. @default 5000 */
  maxEditLength?: number;
}

export const defaultLineDiffBounds: Required<LineDiffBounds> = { timeoutMs: 1000, maxEditLength: 5000 };

/** A maximal run of removed and added lines between two kept lines (removals come first, as git orders them). */
export interface ChangeBlock {
  /** 0-based index in the current lines of the first line removed, or of the line the added lines go before. */
  currentStart: number;
  /** 0-based index in the target lines of the first line added, or of the line after which lines were removed. */
  targetStart: number;
  /** The current lines it removes, latin1, with their line endings. */
  removed: string[];
  /** The target lines it adds, latin1, with their line endings. */
  added: string[];
}

export interface LineDiff {
  currentLines: string[];
  targetLines: string[];
  blocks: ChangeBlock[];
}

/**
 * The minimal line diff from `current` to `target`, or undefined past the bounds.
 *
 * Common leading and trailing lines are cut, and lines found on one side
 * only are set aside before the diff runs: they can never be common, and
 * most edited lines are of that kind. jsdiff then aligns what is left,
 * which is usually far shorter.
 */
export function lineDiff(current: Buffer, target: Buffer, bounds: LineDiffBounds = {}): LineDiff | undefined {
  const currentLines = splitTextLines(current.toString('latin1'));
  const targetLines = splitTextLines(target.toString('latin1'));
  const pairs = commonLines(currentLines, targetLines, { ...defaultLineDiffBounds, ...bounds });
  if (pairs === undefined) return undefined;
  const blocks: ChangeBlock[] = [];
  let inA = 0;
  let inB = 0;
  for (let index = 0; index <= pairs.length; index += 1) {
    const [keptA, keptB] = pairs[index] ?? [currentLines.length, targetLines.length];
    if (keptA > inA || keptB > inB) {
      blocks.push({ currentStart: inA, targetStart: inB, removed: currentLines.slice(inA, keptA), added: targetLines.slice(inB, keptB) });
    }
    inA = keptA + 1;
    inB = keptB + 1;
  }
  return { currentLines, targetLines, blocks };
}

/**
 * The context-free edit script from `current` to `target`, block by block,
 * or undefined when the line diff exceeds the bounds. Block `i` is what hunk
 * ids number `i`; `changeBlocks(...).length` is how many there are.
 */
export function changeBlocks(current: Buffer, target: Buffer, bounds?: LineDiffBounds): ChangeBlock[] | undefined {
  return lineDiff(current, target, bounds)?.blocks;
}

/**
 * `current` with only the chosen blocks of `changeBlocks(current, target)`
 * applied, byte for byte: every block gives `target`, none gives `current`.
 * Undefined when the line diff exceeds the bounds. Callers check the indexes
 * first: one out of range is a bug, and throws.
 */
export function applyBlocks(current: Buffer, target: Buffer, chosen: ReadonlySet<number>, bounds?: LineDiffBounds): Buffer | undefined {
  const diff = lineDiff(current, target, bounds);
  return diff === undefined ? undefined : applyChosen(diff, chosen);
}

/** `applyBlocks` on a line diff already made (a caller that checked the blocks first need not diff twice). */
export function applyChosen(diff: LineDiff, chosen: ReadonlySet<number>): Buffer {
  for (const index of chosen) {
    if (!Number.isInteger(index) || index < 0 || index >= diff.blocks.length) {
      throw new Error(`internal: change block ${index} chosen, but the diff has ${diff.blocks.length}`);
    }
  }
  // Only the last line of either file can lack a newline, and the block that touches it is the last block
  // (nothing can follow it on that side): each line keeps its own ending, and concatenation is exact.
  const pieces: string[] = [];
  let at = 0;
  diff.blocks.forEach((block, index) => {
    pieces.push(diff.currentLines.slice(at, block.currentStart).join(''));
    pieces.push((chosen.has(index) ? block.added : block.removed).join(''));
    at = block.currentStart + block.removed.length;
  });
  pieces.push(diff.currentLines.slice(at).join(''));
  return Buffer.from(pieces.join(''), 'latin1');
}

/**
 * What a file's hunk ids start with: 12 hex characters of the SHA-256 of the
 * stored path and both sides' content hashes, so an id names one diff and
 * goes stale as soon as either side changes.
 */
export function hunkDigest(storedPath: string, currentSha256: string | 'absent', targetSha256: string | 'absent'): string {
  return sha256(Buffer.from([storedPath, currentSha256, targetSha256].join('\0'))).slice(0, 12);
}

/** `digest-first` for a hunk of one block, `digest-first-last` for blocks first..last. */
export function hunkId(digest: string, first: number, last: number): string {
  return first === last ? `${digest}-${first}` : `${digest}-${first}-${last}`;
}

const hunkIdPattern = /^([0-9a-f]{12})-(0|[1-9][0-9]*)(?:-(0|[1-9][0-9]*))?$/;

/**
 * The parts of a hunk id, or undefined when it is not one. Each hunk has one
 * spelling: `d-2-2` is not an id (a one-block hunk is `d-2`).
 */
export function parseHunkId(id: string): { digest: string; first: number; last: number } | undefined {
  const match = hunkIdPattern.exec(id);
  if (match === null) return undefined;
  const first = Number(match[2]);
  const last = match[3] === undefined ? first : Number(match[3]);
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last)) return undefined;
  if (match[3] !== undefined && last <= first) return undefined;
  return { digest: match[1]!, first, last };
}

/** Pairs `[indexInA, indexInB]` of the lines a minimal diff keeps, in order. */
function commonLines(a: string[], b: string[], bounds: Required<LineDiffBounds>): Array<[number, number]> | undefined {
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix += 1;

  const onSideB = new Set(b.slice(prefix, b.length - suffix));
  const onSideA = new Set(a.slice(prefix, a.length - suffix));
  const sharedA: number[] = [];
  const sharedB: number[] = [];
  for (let index = prefix; index < a.length - suffix; index += 1) if (onSideB.has(a[index]!)) sharedA.push(index);
  for (let index = prefix; index < b.length - suffix; index += 1) if (onSideA.has(b[index]!)) sharedB.push(index);
  const changes = diffArrays(
    sharedA.map((index) => a[index]!),
    sharedB.map((index) => b[index]!),
    { timeout: bounds.timeoutMs, maxEditLength: bounds.maxEditLength },
  );
  if (changes === undefined) return undefined;

  const pairs: Array<[number, number]> = [];
  for (let index = 0; index < prefix; index += 1) pairs.push([index, index]);
  let inA = 0;
  let inB = 0;
  for (const change of changes) {
    if (change.removed) inA += change.count;
    else if (change.added) inB += change.count;
    else for (let step = 0; step < change.count; step += 1) pairs.push([sharedA[inA++]!, sharedB[inB++]!]);
  }
  for (let index = suffix; index > 0; index -= 1) pairs.push([a.length - index, b.length - index]);
  return pairs;
}
