import { describe, expect, it } from 'vitest';
import { changeRuns, parsePatch } from '../../src/ui/page/patch-lines.js';
import { wordDiff } from '../../src/ui/page/word-diff.js';

describe('parsePatch(patch)', () => {
  it('numbers the lines of each side from the @@ line, and skips "\\ No newline" markers', () => {
    const patch = ['diff --git a/x b/x', '--- a/x', '+++ b/x', '@@ -2,3 +2,3 @@ head', ' one', '-two', '+TWO', ' three', '\\ No newline at end of file', ''].join('\n');

    const [hunk] = parsePatch(patch);

    expect(hunk!.header).toBe('@@ -2,3 +2,3 @@ head');
    expect(hunk!.lines).toEqual([
      { kind: 'context', text: 'one', oldNumber: 2, newNumber: 2 },
      { kind: 'removed', text: 'two', oldNumber: 3 },
      { kind: 'added', text: 'TWO', newNumber: 3 },
      { kind: 'context', text: 'three', oldNumber: 4, newNumber: 4 },
    ]);
  });

  it('starts an empty side at the line after the one its @@ names, as git numbers it', () => {
    const [hunk] = parsePatch('@@ -0,0 +1,2 @@\n+a\n+b\n');

    expect(hunk!.lines.map((line) => line.newNumber)).toEqual([1, 2]);
  });
});

describe('changeRuns(lines)', () => {
  it('groups removed lines with the added lines right after them', () => {
    const [hunk] = parsePatch('@@ -1,4 +1,3 @@\n a\n-b\n-c\n+B\n d\n-e\n');

    const parts = changeRuns(hunk!.lines).map((part) => ('removed' in part ? `${part.removed.length}-${part.added.length}+` : part.text));

    expect(parts).toEqual(['a', '2-1+', 'd', '1-0+']);
  });
});

describe('wordDiff(before, after)', () => {
  it('marks only the words that differ', () => {
    const diff = wordDiff('  const todo = { title, done: false };', '  const todo = { title, completed: false };');

    expect(diff!.before.filter((segment) => segment.changed).map((segment) => segment.text)).toEqual(['done']);
    expect(diff!.after.filter((segment) => segment.changed).map((segment) => segment.text)).toEqual(['completed']);
    expect(diff!.before.map((segment) => segment.text).join('')).toBe('  const todo = { title, done: false };');
    expect(diff!.after.map((segment) => segment.text).join('')).toBe('  const todo = { title, completed: false };');
  });

  it('gives up on a line pair too long to compare cheaply', () => {
    const long = 'word '.repeat(500);

    expect(wordDiff(long, `${long}x`)).toBeUndefined();
  });
});
