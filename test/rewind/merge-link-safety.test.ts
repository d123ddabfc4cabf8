import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RewindFilesResult } from '../../src/index.js';
import { newId, snapshotTree, tempProject, type TempProject } from '../helpers/temp-project.js';
import { toolWrite } from '../helpers/tool-write.js';

/**
 * A revert or a merge reads the file now and writes what it computed; it
 * must refuse a file that became a link, lost its parent to a link or
 * gained a hard link between the turn and the rewind, as a plain rewind
 * does, and never write the merge through it to a file outside the project.
 */

/** Ten numbered lines; `edits` replaces some of them. */
function lines(edits: Record<number, string> = {}): string {
  return Array.from({ length: 10 }, (_, index) => `${edits[index + 1] ?? `line ${index + 1}`}\n`).join('');
}

const tracked = 'dir/f.txt';

interface Mode {
  name: string;
  /** Sets up a session in which `dir/f.txt` needs a clean merge; returns the rewind to run (a dry run when asked). */
  prepare(project: TempProject): Promise<(dryRun: boolean) => Promise<RewindFilesResult>>;
  /** What the merge writes when nothing interferes. */
  merged: string;
}

const modes: Mode[] = [
  {
    name: 'revertTurn (a later turn edited another line)',
    merged: lines({ 8: 'second turn' }),
    async prepare(project) {
      project.write(tracked, lines());
      const manager = await project.open();
      const first = await manager.checkpoint(newId());
      await toolWrite(manager, project, tracked, lines({ 2: 'first turn' }));
      await manager.checkpoint(newId());
      await toolWrite(manager, project, tracked, lines({ 2: 'first turn', 8: 'second turn' }));
      await manager.checkpoint(newId());
      return (dryRun) => manager.revertTurn(first, { dryRun });
    },
  },
  {
    name: "rewindFiles with onConflict: 'merge' (edited after the tools)",
    merged: lines({ 9: 'user' }),
    async prepare(project) {
      project.write(tracked, lines());
      const manager = await project.open();
      const turn = await manager.checkpoint(newId());
      await toolWrite(manager, project, tracked, lines({ 2: 'agent' }));
      project.write(tracked, lines({ 2: 'agent', 9: 'user' }));
      return (dryRun) => manager.rewindFiles(turn, { dryRun, onConflict: 'merge' });
    },
  },
];

interface Attack {
  name: string;
  reason: 'symlink' | 'parent-changed' | 'hard-link';
  /** Changes the project between the turn and the rewind, with the canary (outside the project) in play. */
  apply(project: TempProject): void;
}

/** Outside files the attacks aim at: each holds what the file holds now, so a merge through it would succeed. */
const attacks: Attack[] = [
  {
    name: 'the file replaced by a symlink to a canary outside the project',
    reason: 'symlink',
    apply(project) {
      const canary = path.join(project.outside, 'canary.txt');
      fs.copyFileSync(project.file(tracked), canary);
      fs.rmSync(project.file(tracked));
      fs.symlinkSync(canary, project.file(tracked));
    },
  },
  {
    name: 'its parent directory moved outside and replaced by a link to it',
    reason: 'parent-changed',
    apply(project) {
      const moved = path.join(project.outside, 'dir');
      fs.renameSync(project.file('dir'), moved);
      fs.symlinkSync(moved, project.file('dir'));
    },
  },
  {
    name: 'a hard link to the file outside the project',
    reason: 'hard-link',
    apply(project) {
      fs.linkSync(project.file(tracked), path.join(project.outside, 'hard-link.txt'));
    },
  },
];

describe('a revert or a merge never writes through a link swapped in after the turn', () => {
  for (const mode of modes) {
    it(`${mode.name}: merges the file when nothing interferes`, async () => {
      const project = tempProject();
      const rewind = await mode.prepare(project);
      const result = await rewind(false);
      expect(result.filesChanged).toEqual([project.file(tracked)]);
      expect(project.read(tracked).toString()).toBe(mode.merged);
    });

    for (const attack of attacks) {
      it(`${mode.name}: refuses ${attack.name} (${attack.reason}), and the outside file keeps its bytes`, async () => {
        const project = tempProject();
        const rewind = await mode.prepare(project);
        attack.apply(project);
        const outsideBefore = snapshotTree(project.outside);
        const projectBefore = project.snapshot();
        expect(Object.keys(outsideBefore).length).toBeGreaterThan(0);

        const preview = await rewind(true);
        const result = await rewind(false);
        for (const answer of [preview, result]) {
          expect(answer).toMatchObject({ canRewind: true, filesChanged: [], skippedLinks: 1 });
          expect(answer.skipped).toEqual([expect.objectContaining({ path: project.file(tracked), reason: attack.reason })]);
        }
        expect(snapshotTree(project.outside)).toEqual(outsideBefore);
        expect(project.snapshot()).toEqual(projectBefore);
      });
    }
  }
});
