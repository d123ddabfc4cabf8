import { beforeAll, describe, expect, it } from 'vitest';
import { mergeThreeWay, type ThreeWayMergeResult } from '../../src/text/three-way-merge.js';
import { gitMergeFile, type GitMergeOutcome } from '../helpers/git-merge-file.js';
import { generateTriple, type MergeTriple } from '../helpers/merge-triples.js';

/**
 * git merge-file is the oracle: for every triple the module must give git's
 * verdict, git's number of conflicts and git's bytes. A failure names the
 * seed; `generateTriple(seed, size)` rebuilds the triple.
 */

const SMALL_CASES = 400;
const LARGE_CASES = 8;
// Files of 40,000+ lines with thousands of edits: git's diff cuts its search short on them. Seed 3 takes
// the backward good-snake cut-off, 8 the forward one, 12 all three (checked when these seeds were chosen).
const HUGE_SEEDS = [3, 8, 12];

/** What git's exit status says: the number of conflicts, capped at 127 as git caps it. */
function exitStatusOf(result: ThreeWayMergeResult): number {
  if (result.status === 'binary') return 255;
  return result.status === 'conflict' ? Math.min(result.conflicts.length, 127) : 0;
}

const text = (value: string) => Buffer.from(value, 'utf8');
const lines = (bytes: Buffer) => bytes.toString('latin1').split(/(?<=\n)/).filter((line) => line !== '');

/**
 * Each conflict's ours, base and theirs text as the merged file shows it between
 * the markers. The generated files have no line that starts like a marker.
 */
function conflictSections(merged: Buffer): Array<{ ours: string; base: string; theirs: string }> {
  const sections: Array<{ ours: string; base: string; theirs: string }> = [];
  let current: string[][] | undefined;
  for (const line of lines(merged)) {
    if (line.startsWith('<<<<<<< ')) current = [[]];
    else if (current && (line.startsWith('||||||| ') || line.startsWith('======='))) current.push([]);
    else if (current && line.startsWith('>>>>>>> ')) {
      const [ours, base, theirs] = current.map((section) => section.join(''));
      sections.push({ ours: ours!, base: base!, theirs: theirs! });
      current = undefined;
    } else current?.at(-1)!.push(line);
  }
  return sections;
}

describe('mergeThreeWay() equals git merge-file --diff3', () => {
  const cases: Array<{ size: 'small' | 'large' | 'huge'; triple: MergeTriple }> = [
    ...Array.from({ length: SMALL_CASES }, (_, index) => ({ size: 'small' as const, triple: generateTriple(index + 1) })),
    ...Array.from({ length: LARGE_CASES }, (_, index) => ({ size: 'large' as const, triple: generateTriple(index + 1, 'large') })),
    ...HUGE_SEEDS.map((seed) => ({ size: 'huge' as const, triple: generateTriple(seed, 'huge') })),
  ];
  let outcomes: GitMergeOutcome[] = [];
  beforeAll(() => {
    outcomes = gitMergeFile(cases.map((entry) => entry.triple));
  });

  it('covers clean merges, conflicts, CRLF, missing last newlines, empty files, untouched and identical sides', () => {
    const conflicted = outcomes.filter((outcome) => outcome.status > 0).length;
    expect(conflicted).toBeGreaterThan(cases.length / 5);
    expect(cases.length - conflicted).toBeGreaterThan(cases.length / 5);
    const files = cases.flatMap(({ triple }) => [triple.base, triple.ours, triple.theirs]);
    const count = (test: (file: Buffer) => boolean) => files.filter(test).length;
    expect(count((file) => file.includes('\r\n'))).toBeGreaterThan(100);
    expect(count((file) => file.length > 0 && file.at(-1) !== 0x0a)).toBeGreaterThan(100);
    expect(count((file) => file.length === 0)).toBeGreaterThan(20);
    const triples = cases.map(({ triple }) => triple);
    expect(triples.filter(({ base, ours, theirs }) => ours.equals(base) || theirs.equals(base)).length).toBeGreaterThan(40);
    expect(triples.filter(({ base, ours, theirs }) => ours.equals(theirs) && !ours.equals(base)).length).toBeGreaterThan(10);
  });

  it.for(cases.map((entry, index) => ({ ...entry, index })))('seed $triple.seed ($size)', ({ size, triple, index }) => {
    const where = `seed ${triple.seed}, generateTriple(${triple.seed}, '${size}')`;
    const git = outcomes[index]!;
    const result = mergeThreeWay(triple);
    expect(result.status, where).toBe(git.status === 0 ? 'clean' : 'conflict');
    expect(exitStatusOf(result), where).toBe(git.status);
    expect(result.status !== 'binary' && result.merged.equals(git.merged), `${where}: merged bytes differ from git's`).toBe(true);
    if (result.status !== 'conflict') return;
    const sections = conflictSections(result.merged);
    const fileLines = { ours: lines(triple.ours), base: lines(triple.base), theirs: lines(triple.theirs) };
    expect(sections.length, where).toBe(result.conflicts.length);
    result.conflicts.forEach((conflict, number) => {
      const shown = sections[number]!;
      for (const [side, range] of [
        ['ours', conflict.oursLines],
        ['base', conflict.baseLines],
        ['theirs', conflict.theirsLines],
      ] as const) {
        // A last line without a newline gets one inside a conflict, so the final newline is left out of the comparison.
        const expected = fileLines[side].slice(...range).join('');
        expect(shown[side].replace(/\r?\n$/, ''), `${where}: conflict ${number}, ${side} lines ${range.join('-')}`).toBe(expected.replace(/\r?\n$/, ''));
      }
    });
  });
});

describe('mergeThreeWay() on hand-written cases', () => {
  const merge = (base: string, ours: string, theirs: string) => mergeThreeWay({ base: text(base), ours: text(ours), theirs: text(theirs) });

  it('merges edits to separate lines cleanly', () => {
    const result = merge('a\nb\nc\nd\ne\n', 'a\nB\nc\nd\ne\n', 'a\nb\nc\nD\ne\n');
    expect(result).toEqual({ status: 'clean', merged: text('a\nB\nc\nD\ne\n') });
  });

  it('takes an edit both sides made once', () => {
    expect(merge('a\nb\nc\n', 'a\nB\nc\nmore\n', 'a\nB\nc\n')).toEqual({ status: 'clean', merged: text('a\nB\nc\nmore\n') });
  });

  it('writes a conflict with diff3 markers and reports its lines (0-based, end excluded)', () => {
    const result = merge('a\nb\nc\n', 'a\nB1\nc\n', 'a\nB2\nB2 again\nc\n');
    expect(result).toEqual({
      status: 'conflict',
      merged: text('a\n<<<<<<< ours\nB1\n||||||| base\nb\n=======\nB2\nB2 again\n>>>>>>> theirs\nc\n'),
      conflicts: [{ oursLines: [1, 2], baseLines: [1, 2], theirsLines: [1, 3] }],
    });
  });

  it('counts edits to adjacent lines as a conflict, as git does', () => {
    const result = merge('a\nb\nc\n', 'A\nb\nc\n', 'a\nB\nc\n');
    expect(result).toEqual({
      status: 'conflict',
      merged: text('<<<<<<< ours\nA\nb\n||||||| base\na\nb\n=======\na\nB\n>>>>>>> theirs\nc\n'),
      conflicts: [{ oursLines: [0, 2], baseLines: [0, 2], theirsLines: [0, 2] }],
    });
  });

  it('writes CRLF markers in a CRLF file', () => {
    const result = merge('a\r\nb\r\nc\r\n', 'a\r\nB1\r\nc\r\n', 'a\r\nB2\r\nc\r\n');
    expect(result.status).toBe('conflict');
    expect(result.status !== 'binary' && result.merged).toEqual(text('a\r\n<<<<<<< ours\r\nB1\r\n||||||| base\r\nb\r\n=======\r\nB2\r\n>>>>>>> theirs\r\nc\r\n'));
  });

  it('keeps a missing final newline in a clean merge', () => {
    expect(merge('a\nb\nc', 'A\nb\nc', 'a\nb\nC')).toEqual({ status: 'clean', merged: text('A\nb\nC') });
  });

  it('ends each side of a conflict with a newline when its last line has none', () => {
    const result = merge('a\nb', 'a\nours', 'a\ntheirs');
    expect(result.status !== 'binary' && result.merged).toEqual(text('a\n<<<<<<< ours\nours\n||||||| base\nb\n=======\ntheirs\n>>>>>>> theirs\n'));
  });

  it('returns one side byte for byte when the other changed nothing', () => {
    const theirs = 'x\r\ny\nz';
    expect(merge('a\n', 'a\n', theirs)).toEqual({ status: 'clean', merged: text(theirs) });
  });

  it('writes the given labels, UTF-8 included', () => {
    const result = mergeThreeWay({ base: text('a\n'), ours: text('b\n'), theirs: text('c\n') }, { labels: { ours: 'HEAD', base: 'turn 3', theirs: 'café' } });
    expect(result.status !== 'binary' && result.merged).toEqual(text('<<<<<<< HEAD\nb\n||||||| turn 3\na\n=======\nc\n>>>>>>> café\n'));
  });

  it('refuses a file with a NUL byte in its first 8000 bytes, on any side, as git does', () => {
    const binary = Buffer.concat([text('a\n'), Buffer.from([0]), text('b\n')]);
    expect(mergeThreeWay({ base: binary, ours: text('a\n'), theirs: text('b\n') })).toEqual({ status: 'binary' });
    expect(mergeThreeWay({ base: text('a\n'), ours: binary, theirs: text('b\n') })).toEqual({ status: 'binary' });
    expect(mergeThreeWay({ base: text('a\n'), ours: text('a\n'), theirs: binary })).toEqual({ status: 'binary' });
    expect(gitMergeFile([{ base: binary, ours: text('a\n'), theirs: text('b\n') }])[0]!.status).toBe(255);
    const lateNul = Buffer.concat([Buffer.alloc(8000, 'a'), Buffer.from([0])]);
    expect(mergeThreeWay({ base: lateNul, ours: lateNul, theirs: lateNul }).status).toBe('clean');
  });

  it('agrees with git on every case above', () => {
    const triples = [
      ['a\nb\nc\nd\ne\n', 'a\nB\nc\nd\ne\n', 'a\nb\nc\nD\ne\n'],
      ['a\nb\nc\n', 'a\nB1\nc\n', 'a\nB2\nB2 again\nc\n'],
      ['a\nb\nc\n', 'A\nb\nc\n', 'a\nB\nc\n'],
      ['a\r\nb\r\nc\r\n', 'a\r\nB1\r\nc\r\n', 'a\r\nB2\r\nc\r\n'],
      ['a\nb\nc', 'A\nb\nc', 'a\nb\nC'],
      ['a\nb', 'a\nours', 'a\ntheirs'],
    ].map(([base, ours, theirs]) => ({ base: text(base!), ours: text(ours!), theirs: text(theirs!) }));
    const outcomes = gitMergeFile(triples);
    triples.forEach((triple, index) => {
      const result = mergeThreeWay(triple);
      expect(result.status !== 'binary' && result.merged, `case ${index}`).toEqual(outcomes[index]!.merged);
    });
  });
});

describe('mergeThreeWay() where git\'s diff heuristics decide the result', () => {
  const file = (lines: readonly string[]) => text(lines.map((line) => `${line}\n`).join(''));
  const numbered = (prefix: string, count: number) => Array.from({ length: count }, (_, index) => `${prefix}${index}`);
  const agreesWithGit = (triples: Array<{ base: Buffer; ours: Buffer; theirs: Buffer }>) => {
    const outcomes = gitMergeFile(triples);
    triples.forEach((triple, index) => {
      const result = mergeThreeWay(triple);
      expect(exitStatusOf(result), `case ${index}`).toBe(outcomes[index]!.status);
      expect(result.status !== 'binary' && result.merged.equals(outcomes[index]!.merged), `case ${index}: merged bytes differ from git's`).toBe(true);
    });
  };

  it('cuts a costly search short where git does (a reversed file; reversed halves around a shared middle)', () => {
    const lines = numbered('L', 1000);
    const halves = [...numbered('P', 400), ...numbered('C', 30), ...numbered('Q', 400)];
    agreesWithGit([
      { base: file(lines), ours: file([...lines].reverse()), theirs: file(lines.map((line, index) => (index === 500 ? 'X' : line))) },
      {
        base: file(halves),
        ours: file([...numbered('P', 400).reverse(), ...numbered('C', 30), ...numbered('Q', 400).reverse()]),
        theirs: file(halves.map((line) => (line === 'C15' ? 'X' : line))),
      },
    ]);
  });

  it('weighs a frequent line against the unmatched lines within 100 lines of it, no further', () => {
    // The probed X has unmatched lines on both sides and X's above; whether the unmatched lines beyond those
    // X's count depends on exactly where the 100-line window ends, and so does which base X it matches.
    const triples = [15, 20, 24, 25, 26, 27, 30, 35].flatMap((frequentAbove) =>
      [60, 120].map((farUnmatched) => ({
        base: file(['N1', ...Array<string>(40).fill('X'), 'N2']),
        ours: file(['N1', ...numbered('u', farUnmatched), ...Array<string>(frequentAbove - 1).fill('X'), 'v', 'X', 'w', 'N2']),
        theirs: file(['N1', ...Array<string>(40).fill('X'), 'T', 'N2']),
      })),
    );
    agreesWithGit(triples);
  });
});
