import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromStoredPath, toStoredPath } from '../../src/paths.js';

// The log's path forms, spelled out with path.relative and path.join: the functions take shortcuts for plain
// paths and must give exactly these answers for every input, plain or not.
const relativeForm = (absolute: string, root: string) => {
  const relative = path.relative(root, absolute);
  const inside = relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
  return inside ? relative.split(path.sep).join('/') : absolute;
};
const absoluteForm = (stored: string, root: string) => (path.isAbsolute(stored) ? stored : path.join(root, ...stored.split('/')));

const roots = ['/work/project', '/work/project/', '/', '/work/./project', '/work//project', '/w'];
const rests = ['a.ts', 'src/deep/a.ts', '..a', 'x/..y', '.hidden/a', 'a/./b', 'a/../b', '../outside', 'a//b', 'a/', '.', '..', ''];

describe('stored paths', () => {
  it('stores a path below the root exactly as path.relative spells it, and everything else as given', () => {
    for (const root of roots) {
      for (const rest of rests) {
        for (const absolute of [`${root}/${rest}`, `${root}${rest}`, `/elsewhere/${rest}`, root]) {
          expect(toStoredPath(absolute, root), `${absolute} under ${root}`).toBe(relativeForm(absolute, root));
        }
      }
    }
  });

  it('turns a stored path back into the path path.join gives', () => {
    for (const root of roots) {
      for (const stored of [...rests, '/absolute/a.ts', '/']) {
        expect(fromStoredPath(stored, root), `${stored} under ${root}`).toBe(absoluteForm(stored, root));
      }
    }
  });

  it('round-trips the paths of a project', () => {
    const root = '/home/dev/app';
    for (const file of ['/home/dev/app/src/index.ts', '/home/dev/app/..config', '/home/dev/app/a b/ü.md', '/tmp/extra-root/file']) {
      expect(fromStoredPath(toStoredPath(file, root), root)).toBe(file);
    }
  });
});
