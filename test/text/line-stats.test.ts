import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countLines, isBinary, lineStats } from '../../src/text/line-stats.js';

/** `git diff --no-index --numstat current target` as [insertions, deletions], or 'binary'. */
function gitNumstat(current: Buffer, target: Buffer): [number, number] | 'binary' {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'numstat-'));
  try {
    fs.writeFileSync(path.join(directory, 'current'), current);
    fs.writeFileSync(path.join(directory, 'target'), target);
    let output: string;
    try {
      output = execFileSync('git', ['diff', '--no-index', '--numstat', 'current', 'target'], { cwd: directory, encoding: 'utf8' });
    } catch (error) {
      output = (error as { stdout: string }).stdout; // exit code 1 means "differs"
    }
    const [insertions, deletions] = output.trim() === '' ? ['0', '0'] : output.trim().split('\t');
    return insertions === '-' ? 'binary' : [Number(insertions), Number(deletions)];
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

const lineArbitrary = fc.constantFrom('a\n', 'b\n', 'c\n', 'shared line\n', '\n', '  indented\n', 'crlf\r\n', 'no newline', 'x', '}\n');

describe('line statistics equal git diff --numstat', () => {
  it('on randomized edits (git as the oracle)', () => {
    fc.assert(
      fc.property(
        fc.array(lineArbitrary, { maxLength: 60 }),
        fc.array(fc.tuple(fc.nat(80), fc.constantFrom('insert', 'delete', 'replace'), lineArbitrary), { maxLength: 12 }),
        (lines, edits) => {
          const edited = [...lines];
          for (const [at, kind, line] of edits) {
            const index = at % (edited.length + 1);
            if (kind === 'insert') edited.splice(index, 0, line);
            else if (kind === 'delete') edited.splice(index, 1);
            else edited[index] = line;
          }
          const current = Buffer.from(lines.join(''));
          const target = Buffer.from(edited.join(''));
          const stats = lineStats(current, target);
          expect([stats.insertions, stats.deletions]).toEqual(gitNumstat(current, target));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('on a file of more than 8 MiB with scattered edits', () => {
    const lines = Array.from({ length: 300_000 }, (_, index) => `line ${index} ${'x'.repeat(index % 40)}\n`);
    const current = Buffer.from(lines.join(''));
    expect(current.length).toBeGreaterThan(8 * 1024 * 1024);
    const edited = [...lines];
    for (let index = 0; index < edited.length; index += 10_007) edited[index] = `edited ${index}\n`;
    edited.splice(150_000, 0, 'inserted\n', 'inserted again\n');
    edited.splice(299_000, 3);
    const target = Buffer.from(edited.join(''));
    const stats = lineStats(current, target);
    expect([stats.insertions, stats.deletions]).toEqual(gitNumstat(current, target));
  });

  it('counts a changed final newline as one line removed and one added, like git', () => {
    expect(lineStats(Buffer.from('a\nb'), Buffer.from('a\nb\n'))).toMatchObject({ insertions: 1, deletions: 1 });
    expect(gitNumstat(Buffer.from('a\nb'), Buffer.from('a\nb\n'))).toEqual([1, 1]);
  });

  it('treats a NUL in the first 8000 bytes as binary (0/0), on either side', () => {
    const binary = Buffer.concat([Buffer.from('text\n'), Buffer.from([0]), Buffer.from('more\n')]);
    expect(isBinary(binary)).toBe(true);
    expect(lineStats(binary, Buffer.from('text\n'))).toEqual({ insertions: 0, deletions: 0, binary: true, skipped: false });
    expect(lineStats(Buffer.from('text\n'), binary)).toMatchObject({ binary: true });
    expect(gitNumstat(binary, Buffer.from('text\n'))).toBe('binary');
    const lateNul = Buffer.concat([Buffer.alloc(9000, 'a'), Buffer.from([0])]);
    expect(isBinary(lateNul)).toBe(false);
    // The bound, exactly as git draws it: byte 7999 counts, byte 8000 does not.
    const nulAt = (index: number) => Buffer.concat([Buffer.alloc(index, 'a'), Buffer.from([0]), Buffer.from('\n')]);
    expect([isBinary(nulAt(7999)), isBinary(nulAt(8000))]).toEqual([true, false]);
    expect([gitNumstat(nulAt(7999), Buffer.from('a\n')), gitNumstat(nulAt(8000), Buffer.from('a\n'))]).toEqual(['binary', [1, 1]]);
    // A view is judged by its own bytes, not by the buffer around it.
    expect(isBinary(binary.subarray(6))).toBe(false);
  });

  it('counts every line of a created or deleted file', () => {
    expect(countLines(Buffer.from(''))).toBe(0);
    expect(countLines(Buffer.from('a'))).toBe(1);
    expect(countLines(Buffer.from('a\nb\n'))).toBe(2);
    expect(lineStats(undefined, Buffer.from('a\nb\nc'))).toMatchObject({ insertions: 3, deletions: 0 });
    expect(lineStats(Buffer.from('a\nb\n'), undefined)).toMatchObject({ insertions: 0, deletions: 2 });
  });

  it('gives up past its bound on pathological input instead of hanging, and says so', () => {
    // Every line appears on both sides, in a different order: the worst case for a line diff.
    const lines = Array.from({ length: 4000 }, (_, index) => `${index % 50}\n`);
    const shuffled = [...lines].reverse();
    const stats = lineStats(Buffer.from(lines.join('')), Buffer.from(shuffled.join('')), { maxSteps: 10_000 });
    expect(stats).toEqual({ insertions: 0, deletions: 0, binary: false, skipped: true });
    const exact = lineStats(Buffer.from(lines.join('')), Buffer.from(shuffled.join('')));
    expect(exact.skipped).toBe(false);
  });
});
