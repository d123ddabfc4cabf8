import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RewindableErrorCode } from '../src/index.js';

const repository = path.resolve(import.meta.dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(repository, file), 'utf8');

describe('documentation stays true to the code', () => {
  it('the README and docs/errors.md document every error code', () => {
    const readme = read('README.md');
    const errors = read('docs/errors.md');
    for (const code of Object.values(RewindableErrorCode)) {
      expect(readme, `README.md lacks ${code}`).toContain(`| \`${code}\` |`);
      expect(errors, `docs/errors.md lacks a section for ${code}`).toContain(`## ${code}\n`);
    }
  });

  it('the README quick start has exactly the two commands that work on a fresh clone', () => {
    const quickStart = read('README.md').split('## Quick start')[1]!.split('\n## ')[0]!;
    const commands = [...quickStart.matchAll(/^(npm [^#\n]*?)\s*(#.*)?$/gm)].map((match) => match[1]);
    expect(commands).toEqual(['npm install && npm run demo', 'npm test']);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.demo).toBeDefined();
    expect(scripts.test).toContain('vitest run');
  });
});
