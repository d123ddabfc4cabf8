import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveCapture } from '../../src/capture/capture-options.js';
import { RewindableError } from '../../src/errors.js';
import { tempProject } from '../helpers/temp-project.js';

describe('resolveCapture(options, root, store)', () => {
  const root = '/work/project';

  for (const pattern of ['../**', '/etc/**', 'src/../../x', '{..,src}/**', '!../secret', 'C:/Users/**', 'a/..', 'nul\0byte']) {
    for (const option of ['include', 'exclude'] as const) {
      it(`refuses ${option} ${JSON.stringify(pattern)} with INVALID_OPTIONS`, () => {
        let thrown: unknown;
        try {
          resolveCapture({ [option]: [pattern] }, root, undefined);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(RewindableError);
        expect(thrown).toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringContaining(`${option}.0`) });
        expect((thrown as Error).message).toContain('relative to the project root');
      });
    }
  }

  it('accepts globs inside the root, names that merely start with two dots included', () => {
    const patterns = ['src/**', '..data/**', 'a..b', '**/*.{ts,tsx}', '!keep.txt'];
    expect(resolveCapture({ include: patterns, exclude: patterns }, root, undefined)).toMatchObject({ include: patterns, exclude: expect.arrayContaining(patterns) });
  });

  it('keeps the store by its path, not as a glob', () => {
    expect(resolveCapture(true, root, '/work/project/store (v2)')).toMatchObject({ storeDirectory: 'store (v2)' });
    expect(resolveCapture(true, root, '/work/elsewhere')!.storeDirectory).toBeUndefined();
    expect(resolveCapture(true, root, '/work/project/store (v2)')!.exclude.some((pattern) => pattern.includes('store'))).toBe(false);
  });

  it('CheckpointManager.open refuses include ["../**"], and nothing outside the project is read or written', async () => {
    const project = tempProject();
    const outside = path.join(project.outside, 'outside.txt');
    fs.writeFileSync(outside, 'outside\n');
    await expect(project.open({ capture: { include: ['../**'] } })).rejects.toMatchObject({ code: 'INVALID_OPTIONS' });
    expect(fs.readFileSync(outside, 'utf8')).toBe('outside\n');
    expect(fs.existsSync(project.store)).toBe(false);
  });
});
