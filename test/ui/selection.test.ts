import { describe, expect, it } from 'vitest';
import { Selection } from '../../src/ui/page/selection.js';
import type { PreviewFile } from '../../src/ui/timeline-types.js';

const cwd = '/project';
const file = (name: string, hunkIds?: string[]): PreviewFile => ({
  path: `${cwd}/${name}`,
  action: 'restore',
  insertions: 1,
  deletions: 1,
  binary: hunkIds === undefined,
  tooLarge: false,
  tooComplex: false,
  statsSkipped: false,
  conflict: false,
  toolCallIds: [],
  current: { size: 1, mode: 0o644 },
  target: { size: 1, mode: 0o644 },
  ...(hunkIds !== undefined ? { hunkIds } : {}),
});

function selectionOf(...files: PreviewFile[]): Selection {
  const selection = new Selection();
  selection.update(files);
  return selection;
}

describe('Selection: what "Rewind selected" sends', () => {
  it('starts with everything chosen, and sends the files still checked as paths', () => {
    const selection = selectionOf(file('a.txt', ['aaaaaaaaaaaa-0']), file('b.txt', ['bbbbbbbbbbbb-0']));
    expect(selection.isEverything()).toBe(true);

    selection.setFile(`${cwd}/b.txt`, false);

    expect(selection.isEverything()).toBe(false);
    expect(selection.request(cwd)).toEqual({ paths: [`${cwd}/a.txt`] });
  });

  it('sends hunks once a file has one left out: every hunk of each other checked file, and the chosen ones of that file', () => {
    const selection = selectionOf(file('a.txt', ['aaaaaaaaaaaa-0']), file('notes.txt', ['cccccccccccc-0', 'cccccccccccc-1']));

    selection.setHunk(`${cwd}/notes.txt`, 'cccccccccccc-1', false);

    expect(selection.request(cwd)).toEqual({ hunks: ['aaaaaaaaaaaa-0', 'cccccccccccc-0'] });
    expect(selection.chosen().partial.map((entry) => [entry.chosen, entry.of])).toEqual([[1, 2]]);
  });

  it("leaves a file out when its last hunk is unchecked, and checking one hunk again chooses only that one", () => {
    const selection = selectionOf(file('a.txt', ['aaaaaaaaaaaa-0']), file('notes.txt', ['cccccccccccc-0', 'cccccccccccc-1']));
    const notes = `${cwd}/notes.txt`;

    selection.setHunk(notes, 'cccccccccccc-0', false);
    selection.setHunk(notes, 'cccccccccccc-1', false);
    expect(selection.hasFile(notes)).toBe(false);
    expect(selection.request(cwd)).toEqual({ paths: [`${cwd}/a.txt`] });

    selection.setHunk(notes, 'cccccccccccc-1', true);
    expect(selection.hasHunk(notes, 'cccccccccccc-0')).toBe(false);
    expect(selection.request(cwd)).toEqual({ hunks: ['aaaaaaaaaaaa-0', 'cccccccccccc-1'] });
  });

  it('says why a choice of hunks cannot take a file without hunks along, and when nothing is chosen', () => {
    const selection = selectionOf(file('image.png'), file('notes.txt', ['cccccccccccc-0', 'cccccccccccc-1']));

    selection.setHunk(`${cwd}/notes.txt`, 'cccccccccccc-0', false);
    expect(selection.request(cwd)).toEqual({ problem: expect.stringMatching(/^image\.png has no hunks to choose/) });

    selection.setFile(`${cwd}/image.png`, false);
    selection.setFile(`${cwd}/notes.txt`, false);
    expect(selection.request(cwd)).toEqual({ problem: 'Nothing is selected: check a file, or a hunk in its diff.' });
  });
});
