import { applyPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineStats } from '../../src/text/line-stats.js';
import { summarizeChange } from '../../src/tools/change-summary.js';

/** Texts made of a few distinct lines, so that edits share and move lines around. */
const text = fc
  .array(fc.constantFrom('alpha', 'beta', 'gamma', '', 'delta delta', '  indented'), { maxLength: 40 })
  .chain((lines) => fc.boolean().map((finalNewline) => lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : '')));

describe('the change summary of a write', () => {
  it('counts exactly what git diff --numstat counts, and its patch turns the old text into the new one', () => {
    fc.assert(
      fc.property(text, text, (before, after) => {
        const summary = summarizeChange('file.txt', { bytes: Buffer.from(before) }, { bytes: Buffer.from(after) });
        const exact = lineStats(Buffer.from(before), Buffer.from(after));
        expect([summary.linesAdded, summary.linesRemoved]).toEqual([exact.insertions, exact.deletions]);
        expect(summary.structuredPatch).not.toBeNull();
        const patch = { oldFileName: 'file.txt', newFileName: 'file.txt', oldHeader: undefined, newHeader: undefined, hunks: summary.structuredPatch! };
        expect(applyPatch(before, patch)).toBe(after);
      }),
      { numRuns: 400 },
    );
  });

  it('numbers the hunks of an edit deep in a large file by their place in the whole file', () => {
    const lines = Array.from({ length: 5000 }, (_, index) => `line ${index}`);
    const before = `${lines.join('\n')}\n`;
    const after = before.replace('line 4000\n', 'line 4000 changed\n');
    const summary = summarizeChange('big.txt', { bytes: Buffer.from(before) }, { bytes: Buffer.from(after) });
    expect(summary.structuredPatch).toEqual([
      { oldStart: 3998, oldLines: 7, newStart: 3998, newLines: 7, lines: [' line 3997', ' line 3998', ' line 3999', '-line 4000', '+line 4000 changed', ' line 4001', ' line 4002', ' line 4003'] },
    ]);
  });

  it('gives no patch, but whole-region counts, for content that is not text', () => {
    const summary = summarizeChange('x.bin', { bytes: Buffer.from([0x00, 0x0a, 0x01, 0x0a]) }, { bytes: Buffer.from('text\n') });
    expect(summary).toEqual({ linesAdded: 0, linesRemoved: 0, structuredPatch: null });
    const latin1 = summarizeChange('x.txt', { bytes: Buffer.from('caf\xe9\n', 'latin1') }, { bytes: Buffer.from('café\n') });
    expect(latin1).toEqual({ linesAdded: 1, linesRemoved: 1, structuredPatch: null });
  });
});
