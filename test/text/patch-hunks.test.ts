import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../bench/lib/source-text.js';
import { applyBlocks, changeBlocks, hunkDigest, parseHunkId, type ChangeBlock } from '../../src/text/patch-hunks.js';
import { gitApplyUnidiffZero } from '../helpers/git-apply.js';
import { generateTriple } from '../helpers/merge-triples.js';

/**
 * git apply is the oracle for partial application: the chosen blocks,
 * written as a context-0 patch, must give git's bytes. A failure names the
 * seed; `generateTriple(seed)` rebuilds the pair (ours is the file now,
 * theirs the target).
 */

const RANDOM_PAIRS = 400;
const latin1 = (text: string) => Buffer.from(text, 'latin1');

// Cases the random pairs reach only by chance: bytes that are not UTF-8, a last line ending in a bare CR, a
// last line that gains or loses its newline next to other edits, files that are or become empty.
const HAND_PAIRS: Array<{ current: Buffer; target: Buffer }> = [
  { current: latin1('caf\xe9\nna\xefve\r\nend'), target: latin1('caf\xe8\nna\xefve\r\nend\n') },
  { current: latin1('a\nb\r'), target: latin1('a\nB\nb\r') },
  { current: latin1('x\ny'), target: latin1('X\ny\nz\n') },
  { current: latin1('x\ny\n'), target: latin1('x\nY\nz') },
  { current: latin1(''), target: latin1('one\ntwo') },
  { current: latin1('one\ntwo'), target: latin1('') },
  { current: latin1('\n\n\n'), target: latin1('\n\r\n\n\n') },
];

/** Context-0 `@@` hunks for the chosen blocks; the new side counts only what the chosen ones before it changed. */
function zeroContextHunks(blocks: readonly ChangeBlock[], chosen: ReadonlySet<number>): Buffer {
  const side = (mark: string, line: string) => (line.endsWith('\n') ? mark + line : `${mark}${line}\n\\ No newline at end of file\n`);
  const start = (from: number, count: number) => (count === 0 ? from : from + 1);
  let shift = 0;
  let text = '';
  blocks.forEach((block, index) => {
    if (!chosen.has(index)) return;
    const { currentStart, removed, added } = block;
    text += `@@ -${start(currentStart, removed.length)},${removed.length} +${start(currentStart + shift, added.length)},${added.length} @@\n`;
    text += removed.map((line) => side('-', line)).join('') + added.map((line) => side('+', line)).join('');
    shift += added.length - removed.length;
  });
  return latin1(text);
}

describe('applyBlocks() applies chosen change blocks as git apply applies their hunks', () => {
  const cases = [
    ...HAND_PAIRS.map((pair) => ({ seed: 0, ...pair })),
    ...Array.from({ length: RANDOM_PAIRS }, (_, index) => {
      const triple = generateTriple(index + 1);
      return { seed: index + 1, current: triple.ours, target: triple.theirs };
    }),
  ].map((pair) => {
    const blocks = changeBlocks(pair.current, pair.target)!;
    const random = seededRandom(pair.seed * 7919 + 1);
    // At least one block when there is one, so every such pair goes through git.
    const chosen = new Set(blocks.flatMap((_, index) => (random() < 0.5 ? [index] : [])));
    if (chosen.size === 0 && blocks.length > 0) chosen.add(Math.floor(random() * blocks.length));
    return { ...pair, blocks, chosen };
  });
  let fromGit: Buffer[] = [];
  beforeAll(() => {
    fromGit = gitApplyUnidiffZero(cases.map((entry) => ({ current: entry.current, hunks: zeroContextHunks(entry.blocks, entry.chosen) })));
  });

  it('covers several blocks, CRLF, missing last newlines, empty sides and partial choices', () => {
    const text = (bytes: Buffer) => bytes.toString('latin1');
    expect(cases.filter((entry) => entry.blocks.length >= 3).length).toBeGreaterThan(cases.length / 4);
    expect(cases.filter((entry) => entry.chosen.size > 0 && entry.chosen.size < entry.blocks.length).length).toBeGreaterThan(cases.length / 4);
    expect(cases.filter((entry) => text(entry.current).includes('\r\n')).length).toBeGreaterThan(50);
    expect(cases.filter((entry) => !text(entry.current).endsWith('\n') || !text(entry.target).endsWith('\n')).length).toBeGreaterThan(50);
    expect(cases.filter((entry) => entry.current.length === 0 || entry.target.length === 0).length).toBeGreaterThan(10);
  });

  it('every block gives the target and none the file now, byte for byte', () => {
    for (const { seed, current, target, blocks } of cases) {
      const all = new Set(blocks.map((_, index) => index));
      expect(applyBlocks(current, target, all), `seed ${seed}`).toEqual(target);
      expect(applyBlocks(current, target, new Set()), `seed ${seed}`).toEqual(current);
    }
  });

  it('some blocks give what git apply --unidiff-zero gives for their hunks', () => {
    cases.forEach(({ seed, current, target, chosen }, index) => {
      expect(applyBlocks(current, target, chosen)?.toString('latin1'), `seed ${seed}`).toBe(fromGit[index]!.toString('latin1'));
    });
  });
});

describe('changeBlocks()', () => {
  it('lists each run of changed lines between kept ones, with its place in both files', () => {
    expect(changeBlocks(latin1('a\nb\nc\nd\ne\n'), latin1('a\nB\nc\ne\nf'))).toEqual([
      { currentStart: 1, targetStart: 1, removed: ['b\n'], added: ['B\n'] },
      { currentStart: 3, targetStart: 3, removed: ['d\n'], added: [] },
      { currentStart: 5, targetStart: 4, removed: [], added: ['f'] },
    ]);
    expect(changeBlocks(latin1('same\n'), latin1('same\n'))).toEqual([]);
  });

  it('gives undefined past maxEditLength, as applyBlocks does', () => {
    const lines = Array.from({ length: 200 }, (_, index) => `line ${index}\n`);
    const current = latin1(lines.join(''));
    const target = latin1(lines.map((_, index) => lines[(index * 37) % lines.length]).join(''));

    expect(changeBlocks(current, target, { maxEditLength: 10 })).toBeUndefined();
    expect(applyBlocks(current, target, new Set([0]), { maxEditLength: 10 })).toBeUndefined();
    expect(changeBlocks(current, target)!.length).toBeGreaterThan(10);
  });
});

describe('applyBlocks() with a block that does not exist', () => {
  it('throws an internal error: callers check ids against changeBlocks().length first', () => {
    const [current, target] = [latin1('a\nb\n'), latin1('a\nc\n')];

    expect(() => applyBlocks(current, target, new Set([1]))).toThrow(/^internal:/);
    expect(() => applyBlocks(current, target, new Set([-1]))).toThrow(/^internal:/);
  });
});

describe('hunk ids', () => {
  it('hunkDigest(path, current, target) is 12 hex characters of the SHA-256 of the three joined by NUL', () => {
    const current = 'a'.repeat(64);
    const expected = crypto.createHash('sha256').update(`src/app.ts\0${current}\0absent`).digest('hex').slice(0, 12);

    expect(hunkDigest('src/app.ts', current, 'absent')).toBe(expected);
    expect(hunkDigest('src/app.ts', 'absent', current)).not.toBe(expected);
    expect(hunkDigest('src/app.tsx', current, 'absent')).not.toBe(expected);
  });

  it('parseHunkId(id) reads digest-block and digest-first-last', () => {
    expect(parseHunkId('0123456789ab-0')).toEqual({ digest: '0123456789ab', first: 0, last: 0 });
    expect(parseHunkId('0123456789ab-2-4')).toEqual({ digest: '0123456789ab', first: 2, last: 4 });
    expect(parseHunkId('0123456789ab-17-120')).toEqual({ digest: '0123456789ab', first: 17, last: 120 });
  });

  it('parseHunkId(id) rejects anything else, and a second spelling of a one-block hunk', () => {
    for (const id of [
      '',
      '0123456789ab',
      '0123456789ab-',
      '0123456789a-1',
      '0123456789abc-1',
      '0123456789AB-1',
      '0123456789ag-1',
      '0123456789ab-01',
      '0123456789ab-1-02',
      '0123456789ab-4-2',
      '0123456789ab-2-2',
      '0123456789ab-1-2-3',
      '0123456789ab--1',
      '0123456789ab-1.5',
      ' 0123456789ab-1',
      '0123456789ab-1\n',
      '0123456789ab-99999999999999999999',
    ]) {
      expect(parseHunkId(id), JSON.stringify(id)).toBeUndefined();
    }
  });
});
