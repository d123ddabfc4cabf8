import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveCapture } from '../../src/capture/capture-options.js';
import { walkScope, type PreviousWalk } from '../../src/capture/walk-scope.js';
import { tempProject } from '../helpers/temp-project.js';

// Names with glob syntax and line breaks included: every listing must find them alike.
const names = ['a', 'b', 'c', 'node_modules', 'build', 'x.log', 'y.ts', '.gitignore', '+(g)', 'back\\slash', 'line\nbreak'];
const operation = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), directory: fc.array(fc.constantFrom(...names), { maxLength: 3 }), name: fc.constantFrom(...names) }),
  fc.record({ kind: fc.constant('remove' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('rename' as const), index: fc.nat(), name: fc.constantFrom(...names) }),
  fc.record({ kind: fc.constant('link' as const), directory: fc.array(fc.constantFrom(...names), { maxLength: 2 }), name: fc.constantFrom(...names) }),
  fc.record({ kind: fc.constant('rules' as const), directory: fc.array(fc.constantFrom(...names), { maxLength: 1 }), rule: fc.constantFrom('build/', '*.log', '!x.log', 'c', '/a') }),
);

type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

/** Every path under root (files, links, directories), for picking targets. */
function everything(root: string, prefix = ''): string[] {
  // Listed by hand: Node 20's recursive readdir follows links to directories, and the tree has a link to its root.
  const found: string[] = [];
  for (const dirent of fs.readdirSync(path.join(root, prefix), { withFileTypes: true })) {
    if (dirent.name === '.git') continue;
    const relative = path.join(prefix, dirent.name);
    found.push(relative);
    if (dirent.isDirectory()) found.push(...everything(root, relative));
  }
  return found.sort();
}

function apply(root: string, step: Operation): void {
  try {
    if (step.kind === 'write' || step.kind === 'link') {
      const directory = path.join(root, ...step.directory);
      fs.mkdirSync(directory, { recursive: true });
      const target = path.join(directory, step.name);
      if (step.kind === 'write') fs.writeFileSync(target, `content ${Math.random()}`);
      else fs.symlinkSync(root, target);
    } else if (step.kind === 'rules') {
      const directory = path.join(root, ...step.directory);
      fs.mkdirSync(directory, { recursive: true });
      fs.appendFileSync(path.join(directory, '.gitignore'), `${step.rule}\n`);
    } else {
      const all = everything(root);
      if (all.length === 0) return;
      const chosen = path.join(root, all[step.index % all.length]!);
      if (step.kind === 'remove') fs.rmSync(chosen, { recursive: true, force: true });
      else fs.renameSync(chosen, path.join(path.dirname(chosen), step.name));
    }
  } catch {
    // An operation that does not apply to this tree (a file where a directory is needed ...) is skipped.
  }
}

function summary(walk: Awaited<ReturnType<typeof walkScope>>) {
  return { entries: walk.entries.map((entry) => entry.relative).sort(), ignored: [...walk.ignored].sort(), kept: [...walk.reusable.kept].sort() };
}

describe('walkScope reusing the previous walk', () => {
  it('lists exactly what a full walk lists, after any changes (property test)', async () => {
    // The set of kept paths is the previous walk's brought up to date where it can be: count how often, so that
    // the comparison below covers that way too, not only a set built afresh.
    let keptInPlace = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), fc.array(operation, { minLength: 1, maxLength: 12 }), async (before, between) => {
        const project = tempProject();
        const capture = resolveCapture(true, project.root, project.store)!;
        for (const step of before) apply(project.root, step);
        const first = await walkScope(project.root, capture);
        // Pretend the first walk ran well after these changes, so its listings are reused unless a directory changed.
        const previous: PreviousWalk = { ...first.reusable, startedAtNs: first.reusable.startedAtNs + 3_600_000_000_000n };
        for (const step of between) apply(project.root, step);
        const incremental = await walkScope(project.root, capture, previous);
        if (incremental.reusable.kept === first.reusable.kept) keptInPlace += 1;
        const full = await walkScope(project.root, capture);
        expect(summary(incremental)).toEqual(summary(full));
      }),
      { numRuns: 300 },
    );
    expect(keptInPlace).toBeGreaterThan(30);
  });
});

describe('walkScope over a directory of very many files', () => {
  // 130,000 names: spreading that many into one call (`push(...entries)`) overflows the stack.
  it('reuses its listing, and notices it gone, without passing its entries as arguments', async () => {
    const project = tempProject();
    const big = path.join(project.root, 'big');
    fs.mkdirSync(big);
    for (let index = 0; index < 130_000; index += 1) fs.writeFileSync(path.join(big, `f${index}`), '');
    fs.writeFileSync(path.join(project.root, 'small.txt'), 'small');
    const capture = resolveCapture(true, project.root, project.store)!;
    const first = await walkScope(project.root, capture);
    const previous: PreviousWalk = { ...first.reusable, startedAtNs: first.reusable.startedAtNs + 3_600_000_000_000n };
    const again = await walkScope(project.root, capture, previous);
    expect(again.entries.length).toBe(130_001);
    fs.rmSync(big, { recursive: true });
    const afterRemoval = await walkScope(project.root, capture, { ...again.reusable, startedAtNs: again.reusable.startedAtNs + 3_600_000_000_000n });
    expect(afterRemoval.entries.map((entry) => entry.relative)).toEqual(['small.txt']);
    expect([...afterRemoval.reusable.kept]).toEqual(['small.txt']);
  }, 120_000);
});
