import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveCapture, type ResolvedCapture } from '../../src/capture/capture-options.js';
import { walkScope, type PreviousWalk } from '../../src/capture/walk-scope.js';
import { CheckpointManager } from '../../src/index.js';
import { newId, tempProject } from '../helpers/temp-project.js';

/** What a walk keeps and what `.gitignore` rules leave out, sorted. */
async function scopeOf(root: string, capture: ResolvedCapture, previous?: PreviousWalk) {
  const walk = await walkScope(root, capture, previous);
  return { walk, entries: walk.entries.map((entry) => entry.relative).sort(), ignored: [...walk.ignored].sort() };
}

/** The previous walk as if it had run long after the tree was written, so its listings are reused where they can be. */
function settled(previous: PreviousWalk): PreviousWalk {
  return { ...previous, startedAtNs: previous.startedAtNs + 3_600_000_000_000n };
}

describe('walkScope: any file name', () => {
  it('leaves names that are not valid UTF-8 out of scope, and the journal keeps working beside them', async () => {
    const project = tempProject();
    project.write('a.txt', 'a\n');
    const bytes = (name: string) => Buffer.concat([Buffer.from(project.root + '/'), Buffer.from(name, 'latin1')]);
    fs.writeFileSync(bytes('data\xff.bin'), 'not named in UTF-8\n');
    const manager = await project.open({ capture: { journal: true } });
    await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ scanned: 1 });
    fs.mkdirSync(bytes('dir\xff'));
    fs.writeFileSync(Buffer.concat([bytes('dir\xff'), Buffer.from('/f.txt')]), 'x\n');
    project.write('a.txt', 'a2\n');
    for (let turn = 0; turn < 2; turn += 1) {
      await manager.checkpoint(newId());
      expect(manager.lastScan).toMatchObject({ via: 'journal', scanned: 1 });
    }
    expect(manager.lastScan).toMatchObject({ modified: [] });
  });

  it('captures files whose name holds a line break, which no glob matches; what is under a directory so named stays unseen', async () => {
    const project = tempProject();
    project.write('normal.txt', 'normal\n');
    project.write('weird\nname.txt', 'there before the session\n');
    project.write('sub/carriage\rreturn\u2028.txt', 'also there\n');
    project.write('dir\nwith\rbreaks\u2028/inner\u2029file', 'nested\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan).toMatchObject({ scanned: 3, firstBackups: 3 });

    project.write('new.txt', 'created during the turn\n');
    project.write('other\nname.txt', 'created during the turn\n');
    project.write('weird\nname.txt', 'changed by the agent\n');
    fs.rmSync(project.file('sub/carriage\rreturn\u2028.txt'));
    await manager.checkpoint(newId());
    expect([...manager.lastScan!.created].sort()).toEqual([project.file('new.txt'), project.file('other\nname.txt')].sort());
    expect(manager.lastScan!.modified).toEqual([project.file('weird\nname.txt')]);
    expect(manager.lastScan!.deleted).toEqual([project.file('sub/carriage\rreturn\u2028.txt')]);

    await manager.rewindFiles(first);
    expect(project.exists('new.txt')).toBe(false);
    expect(project.exists('other\nname.txt')).toBe(false);
    expect(project.read('weird\nname.txt').toString()).toBe('there before the session\n');
    expect(project.read('sub/carriage\rreturn\u2028.txt').toString()).toBe('also there\n');
    expect(project.read('dir\nwith\rbreaks\u2028/inner\u2029file').toString()).toBe('nested\n');
  });

  it('sees files created in directories named with glob syntax, and a rewind removes them', async () => {
    const names = ['back\\slash', '+(x)', '@(y)', '!(z)', '[abc]', '{a,b}', '*'];
    const project = tempProject();
    for (const name of names) project.write(`${name}/old.txt`, 'old\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan!.scanned).toBe(names.length);

    for (const name of names) project.write(`${name}/new.txt`, 'created during the turn\n');
    await manager.checkpoint(newId());
    expect([...manager.lastScan!.created].sort()).toEqual(names.map((name) => project.file(`${name}/new.txt`)).sort());

    await manager.rewindFiles(first);
    for (const name of names) {
      expect(project.exists(`${name}/new.txt`)).toBe(false);
      expect(project.read(`${name}/old.txt`).toString()).toBe('old\n');
    }
  });

  it('a walk reusing listings finds what a full walk finds, whatever the names', async () => {
    const project = tempProject();
    const names = ['back\\slash', '+(x)', '[abc]', 'line\nbreak', 'node_modules', 'plain'];
    for (const name of names) project.write(`${name}/${name}/file`, 'x\n');
    const capture = resolveCapture(true, project.root, project.store)!;
    const first = await scopeOf(project.root, capture);
    for (const name of names) project.write(`${name}/${name}/added ${name}`, 'y\n');
    const incremental = await scopeOf(project.root, capture, settled(first.walk.reusable));
    const full = await scopeOf(project.root, capture);
    expect(incremental.entries).toEqual(full.entries);
    expect(full.entries).toHaveLength(2 * (names.length - 2)); // node_modules stays excluded, what is under a directory named with a line break unseen
  });
});

describe('walkScope: the store inside the project', () => {
  for (const name of ['store (v2)', '*']) {
    it(`never scans a store named ${JSON.stringify(name)}, and a rewind leaves it alone`, async () => {
      const project = tempProject();
      project.write('a.txt', 'a\n');
      const storeDir = project.file(name);
      const manager = await CheckpointManager.open({ cwd: project.root, storeDir, durability: 'none', capture: true });
      try {
        const first = await manager.checkpoint(newId());
        expect(manager.lastScan!.scanned).toBe(1);
        project.write('b.txt', 'b\n');
        await manager.checkpoint(newId());
        expect(manager.lastScan!.created).toEqual([project.file('b.txt')]);
        const result = await manager.rewindFiles(first);
        expect(result.filesChanged).toEqual([project.file('b.txt')]);
        expect(fs.readdirSync(storeDir, { recursive: true }).some((file) => String(file).endsWith('.jsonl'))).toBe(true);
      } finally {
        await manager.close();
      }
    });
  }
});

describe('walkScope: never outside the root', () => {
  it('returns no entry outside the root even for globs the options would refuse', async () => {
    const project = tempProject();
    project.write('in.txt', 'inside\n');
    fs.writeFileSync(path.join(project.outside, 'outside.txt'), 'outside\n');
    const capture: ResolvedCapture = { ...resolveCapture(true, project.root, project.store)!, include: ['../**', '../outside/outside.txt', 'in.txt'] };
    const { entries } = await scopeOf(project.root, capture);
    expect(entries).toEqual(['in.txt']);
  });
});

describe('walkScope: .gitignore pruning matches git', () => {
  it('keeps a file named like a directory-only rule in scope (`build/` ignores no file `build`)', async () => {
    const project = tempProject();
    project.write('.gitignore', 'build/\n');
    project.write('scripts/build', '#!/bin/sh\necho original\n', 0o755);
    project.write('build/out.js', 'generated\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    project.write('scripts/build', '#!/bin/sh\necho broken\n');
    project.write('build/out.js', 'generated again\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan!.modified).toEqual([project.file('scripts/build')]);
    expect(manager.lastScan!.excludePatterns).toContain('**/build/**');

    await manager.rewindFiles(first);
    expect(project.read('scripts/build').toString()).toBe('#!/bin/sh\necho original\n');
    expect(project.read('build/out.js').toString()).toBe('generated again\n');
  });

  it('scans a directory that a nested .gitignore re-includes (`!build`), and still leaves the others out', async () => {
    const project = tempProject();
    project.write('.gitignore', 'build\n');
    project.write('pkg/.gitignore', '!build\n');
    project.write('pkg/build/main.c', 'int main() {}\n');
    project.write('build/out.o', 'object\n');
    const manager = await project.open({ capture: true });
    const first = await manager.checkpoint(newId());
    expect(manager.lastScan!.ignored).toEqual([project.file('build/out.o')]);
    project.write('pkg/build/main.c', 'broken\n');
    project.write('build/out.o', 'object again\n');
    await manager.checkpoint(newId());
    expect(manager.lastScan!.modified).toEqual([project.file('pkg/build/main.c')]);

    await manager.rewindFiles(first);
    expect(project.read('pkg/build/main.c').toString()).toBe('int main() {}\n');
    expect(project.read('build/out.o').toString()).toBe('object again\n');
  });

  it('still prunes ignored directories no rule re-includes: the walk never lists what they hold', async () => {
    const project = tempProject();
    project.write('.gitignore', 'dist/\n/target\n');
    project.write('dist/bundle.js', 'bundle\n');
    project.write('packages/app/dist/bundle.js', 'bundle\n');
    project.write('target/debug/app', 'binary\n');
    project.write('packages/app/target/kept.txt', 'only the root target is ignored\n');
    project.write('src/main.ts', 'main\n');
    const { entries, ignored, walk } = await scopeOf(project.root, resolveCapture(true, project.root, project.store)!);
    expect(entries).toEqual(['.gitignore', 'packages/app/target/kept.txt', 'src/main.ts']);
    expect(ignored).toEqual([]);
    expect(walk.excludePatterns).toEqual(expect.arrayContaining(['**/dist/**', 'target/**']));
  });

  it('with `gitignore: false`, prunes nothing and keeps .gitignore files as plain files', async () => {
    const project = tempProject();
    project.write('.gitignore', 'dist/\n');
    project.write('pkg/.gitignore', '*.log\n');
    project.write('dist/bundle.js', 'bundle\n');
    project.write('pkg/debug.log', 'log\n');
    const { entries, ignored } = await scopeOf(project.root, resolveCapture({ gitignore: false }, project.root, project.store)!);
    expect(entries).toEqual(['.gitignore', 'dist/bundle.js', 'pkg/.gitignore', 'pkg/debug.log']);
    expect(ignored).toEqual([]);
  });
});
