import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RewindableError } from '../../src/index.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/** A session of one turn that changed four files: two under src/, one created, one at the top. */
async function turnOfFourFiles(project: TempProject) {
  project.write('src/a.ts', 'a0\n');
  project.write('src/nested/b.ts', 'b0\n');
  project.write('README.md', 'r0\n');
  const manager = await project.open();
  const turn = await manager.checkpoint(newId());
  for (const file of ['src/a.ts', 'src/nested/b.ts', 'README.md', 'src/created.ts']) await manager.trackEdit(file);
  project.write('src/a.ts', 'a1\na1\n');
  project.write('src/nested/b.ts', 'b1\n');
  project.write('README.md', 'r1\n');
  project.write('src/created.ts', 'new\n');
  return { manager, turn };
}

describe('rewindFiles(id, { paths }) rewinds only the files named', () => {
  it('restores a named file and leaves every other one as it is, uncounted', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    const before = project.snapshot();

    const preview = await manager.rewindFiles(turn, { dryRun: true, paths: ['src/a.ts'] });
    expect(project.snapshot()).toEqual(before);
    const result = await manager.rewindFiles(turn, { paths: ['src/a.ts'] });

    for (const answer of [preview, result]) {
      expect(answer).toMatchObject({ canRewind: true, filesChanged: [project.file('src/a.ts')], insertions: 1, deletions: 2, skippedLinks: 0, skipped: [] });
    }
    expect(project.read('src/a.ts').toString()).toBe('a0\n');
    expect(project.read('src/nested/b.ts').toString()).toBe('b1\n');
    expect(project.read('README.md').toString()).toBe('r1\n');
    expect(project.read('src/created.ts').toString()).toBe('new\n');
  });

  it('takes directories and globs, relative or absolute', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);

    const byDirectory = await manager.rewindFiles(turn, { dryRun: true, paths: ['src/nested'] });
    const byGlob = await manager.rewindFiles(turn, { dryRun: true, paths: ['src/**/*.ts'] });
    const byAbsolute = await manager.rewindFiles(turn, { dryRun: true, paths: [project.file('README.md'), path.join(project.root, 'src', '*.ts')] });

    expect(byDirectory.canRewind && byDirectory.filesChanged).toEqual([project.file('src/nested/b.ts')]);
    expect(byGlob.canRewind && [...byGlob.filesChanged].sort()).toEqual([project.file('src/a.ts'), project.file('src/created.ts'), project.file('src/nested/b.ts')].sort());
    expect(byAbsolute.canRewind && [...byAbsolute.filesChanged].sort()).toEqual([project.file('README.md'), project.file('src/a.ts'), project.file('src/created.ts')].sort());
  });

  it('takes a name with glob characters as the file it names (app/[id]/page.tsx) before it takes it as a glob', async () => {
    const project = tempProject();
    project.write('app/[id]/page.tsx', 'page 0\n');
    project.write('app/i/page.tsx', 'i 0\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const file of ['app/[id]/page.tsx', 'app/i/page.tsx']) await manager.trackEdit(file);
    project.write('app/[id]/page.tsx', 'page 1\n');
    project.write('app/i/page.tsx', 'i 1\n');

    const literal = await manager.rewindFiles(turn, { dryRun: true, paths: ['app/[id]/page.tsx'] });
    const glob = await manager.rewindFiles(turn, { dryRun: true, paths: ['app/[id]/*.tsx'] });

    expect(literal.canRewind && literal.filesChanged).toEqual([project.file('app/[id]/page.tsx')]);
    // picomatch lets a bracket class match its own text as well: the glob takes both.
    expect(glob.canRewind && [...glob.filesChanged].sort()).toEqual([project.file('app/[id]/page.tsx'), project.file('app/i/page.tsx')].sort());
  });

  it('refuses, with the entry named, a path that selects no tracked file', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    const before = project.snapshot();

    const preview = await manager.rewindFiles(turn, { dryRun: true, paths: ['src/a.ts', 'src/typo.ts'] });
    const real = await manager.rewindFiles(turn, { paths: ['docs/**'] }).catch((error: unknown) => error);

    expect(preview).toMatchObject({ canRewind: false, errorCode: 'INVALID_PATH', error: expect.stringContaining('"src/typo.ts"') });
    expect(RewindableError.hasCode(real, 'INVALID_PATH') && real.message).toContain('"docs/**" in rewindFiles');
    for (const bad of [[''], ['a\0b'], 'src/a.ts' as unknown as string[]]) {
      await expect(manager.rewindFiles(turn, { paths: bad })).rejects.toSatisfy((error) => RewindableError.isInstance(error));
    }
    expect(project.snapshot()).toEqual(before);
  });

  it('an undo of a selective rewind puts back the selected file and nothing else moves', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    const result = await manager.rewindFiles(turn, { paths: ['src/a.ts'] });
    // An edit made after the selective rewind, outside the selection, by someone else.
    project.write('README.md', 'r2 by the user\n');

    const undo = await manager.rewindFiles(result.undoCheckpointId!, { paths: ['src/a.ts'] });

    expect(undo.filesChanged).toEqual([project.file('src/a.ts')]);
    expect(project.read('src/a.ts').toString()).toBe('a1\na1\n');
    expect(project.read('README.md').toString()).toBe('r2 by the user\n');
  });

  it('records every tracked file in the undo point, so a full undo restores files changed outside the selection too', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    await manager.checkpoint(newId());
    // Changed after the latest checkpoint and not selected: only the undo point holds these bytes.
    project.write('README.md', 'r2, unrecorded\n');
    const result = await manager.rewindFiles(turn, { paths: ['src'] });
    project.write('README.md', 'r3\n');

    await manager.rewindFiles(result.undoCheckpointId!);

    expect(project.read('README.md').toString()).toBe('r2, unrecorded\n');
    expect(project.read('src/a.ts').toString()).toBe('a1\na1\n');
    expect(project.read('src/created.ts').toString()).toBe('new\n');
  });

  it('never writes through a link among the selected files, and counts it', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    const canary = path.join(project.outside, 'canary.txt');
    fs.writeFileSync(canary, 'outside\n');
    fs.rmSync(project.file('src/a.ts'));
    fs.symlinkSync(canary, project.file('src/a.ts'));

    const result = await manager.rewindFiles(turn, { paths: ['src/a.ts', 'README.md'] });

    expect(result).toMatchObject({ filesChanged: [project.file('README.md')], skippedLinks: 1, skipped: [{ path: project.file('src/a.ts'), reason: 'symlink' }] });
    expect(fs.readFileSync(canary, 'utf8')).toBe('outside\n');
    expect(project.read('src/nested/b.ts').toString()).toBe('b1\n');
  });

  it('is what rewind({ scope: "files", paths }) does too', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);

    const result = await manager.rewind(turn, { scope: 'files', paths: ['README.md'] });

    expect(result).toMatchObject({ status: 'success', files: { filesChanged: [project.file('README.md')] } });
    expect(project.read('README.md').toString()).toBe('r0\n');
    expect(project.read('src/a.ts').toString()).toBe('a1\na1\n');
  });

  it('selects the same files in a session resumed from its log', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    await manager.close();
    const resumed = await project.open({ session: { resume: manager.sessionId } });

    const result = await resumed.rewindFiles(turn, { paths: ['src/nested/*.ts'] });

    expect(result.filesChanged).toEqual([project.file('src/nested/b.ts')]);
    expect(project.read('src/nested/b.ts').toString()).toBe('b0\n');
    expect(project.read('src/a.ts').toString()).toBe('a1\na1\n');
  });
});

describe('a paths entry that leads out of the project', () => {
  it('is refused with INVALID_PATH naming the entry, by rewindFiles and diffFiles alike, and nothing changes', async () => {
    const project = tempProject();
    const { manager, turn } = await turnOfFourFiles(project);
    const before = project.snapshot();
    const escapes = ['..', '../x', 'src/../../b', '../*', '../**', path.dirname(project.root), path.join(project.outside, 'x'), '/', 'src/*/../../..'];

    for (const entry of escapes) {
      const preview = await manager.rewindFiles(turn, { dryRun: true, paths: ['src/a.ts', entry] });
      const real = await manager.rewindFiles(turn, { paths: [entry] }).catch((error: unknown) => error);
      const diff = await manager.diffFiles(turn, { paths: [entry] }).catch((error: unknown) => error);

      expect(preview, entry).toMatchObject({ canRewind: false, errorCode: 'INVALID_PATH', error: expect.stringContaining(JSON.stringify(entry)) });
      for (const error of [real, diff]) {
        expect(RewindableError.hasCode(error, 'INVALID_PATH') && error.details, entry).toEqual({ path: entry });
        expect((error as Error).message, entry).toContain('outside the project');
      }
    }
    expect(project.snapshot()).toEqual(before);
  });

  it('still selects a file of the project spelled through the parent directory, and a file of an extra root', async () => {
    const project = tempProject();
    project.write('src/a.ts', 'a0\n');
    const extra = path.join(project.outside, 'notes.txt');
    fs.writeFileSync(extra, 'n0\n');
    const manager = await project.open({ extraRoots: [project.outside] });
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('src/a.ts');
    await manager.trackEdit(extra);
    project.write('src/a.ts', 'a1\n');
    fs.writeFileSync(extra, 'n1\n');

    const throughParent = await manager.rewindFiles(turn, { dryRun: true, paths: ['../project/src/a.ts'] });
    const extraByPath = await manager.rewindFiles(turn, { dryRun: true, paths: ['../outside/notes.txt'] });
    const extraByGlob = await manager.rewindFiles(turn, { dryRun: true, paths: [path.join(project.outside, '*.txt')] });

    expect(throughParent.canRewind && throughParent.filesChanged).toEqual([project.file('src/a.ts')]);
    expect(extraByPath.canRewind && extraByPath.filesChanged).toEqual([extra]);
    expect(extraByGlob.canRewind && extraByGlob.filesChanged).toEqual([extra]);
  });
});

describe('many paths entries', () => {
  it('select exactly the files each names, whether files, directories or globs, thousands at once', async () => {
    const project = tempProject();
    const names = Array.from({ length: 2000 }, (_, index) => `d${index % 20}/f${index}.txt`);
    for (const name of names) project.write(name, '0\n');
    const manager = await project.open();
    const turn = await manager.checkpoint(newId());
    for (const name of names) await manager.trackEdit(name);
    for (const name of names) project.write(name, '1\n');

    const evenFiles = names.filter((_, index) => index % 2 === 0);
    const narrowGlobs = names.filter((_, index) => index % 7 === 0).map((name) => name.replace(/\.txt$/, '.t?t'));
    const sameGlobOften = Array.from({ length: 1000 }, () => 'd3/f1*.txt');
    const paths = [...evenFiles, 'd1', ...narrowGlobs, ...sameGlobOften, path.join(project.root, 'd5')];
    const result = await manager.rewindFiles(turn, { dryRun: true, paths });

    const expected = names.filter((name, index) => index % 2 === 0 || name.startsWith('d1/') || index % 7 === 0 || /^d3\/f1/.test(name) || name.startsWith('d5/'));
    expect(expected.some((name) => name.startsWith('d10/'))).toBe(true);
    expect(result.canRewind && [...result.filesChanged].sort()).toEqual(expected.map((name) => project.file(name)).sort());
  }, 60_000);
});
