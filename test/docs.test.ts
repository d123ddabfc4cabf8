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

  it('the README starts with the install command, and its Develop section has exactly the two commands that work on a fresh clone', () => {
    const readme = read('README.md');
    expect(readme.indexOf('npm install rewindable')).toBeGreaterThan(0);
    expect(readme.indexOf('npm install rewindable')).toBeLessThan(readme.indexOf('## Develop'));
    const develop = readme.split('## Develop')[1]!.split('\n## ')[0]!;
    const commands = [...develop.matchAll(/^(npm [^#\n]*?)\s*(#.*)?$/gm)].map((match) => match[1]);
    expect(commands).toEqual(['npm install && npm run demo', 'npm test']);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.demo).toBeDefined();
    expect(scripts.test).toContain('vitest run');
  });

  it('no document of the project cites issue numbers', () => {
    const documents = ['README.md', ...fs.readdirSync(path.join(repository, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
    for (const document of documents) expect(read(document), document).not.toMatch(/\b(issue|task) #?\d+|\bitem \d+ of/i);
  });

  it('the README links to files of the repository absolutely (the registry page ships no docs/), and each one exists', () => {
    const readme = read('README.md');
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) {
      if (link.startsWith('#')) continue;
      const inRepository = /^https:\/\/github\.com\/rewindable\/rewindable\/(?:blob|raw)\/main\/(.+)$/.exec(link);
      expect(inRepository, `README link ${link} is neither an anchor nor a file of the repository`).not.toBeNull();
      expect(fs.existsSync(path.join(repository, inRepository![1]!)), `README links to ${link}, which does not exist`).toBe(true);
    }
  });

  it('every in-page link of the README names a heading of it', () => {
    const readme = read('README.md');
    const slug = (heading: string) => heading.toLowerCase().replace(/[^\p{L}\p{N} -]/gu, '').replace(/ /g, '-');
    const anchors = new Set([...readme.matchAll(/^#+ (.+)$/gm)].map((match) => slug(match[1]!)));
    for (const [, anchor] of readme.matchAll(/\]\(#([^)]+)\)/g)) expect(anchors, `README links to #${anchor}`).toContain(anchor);
  });
});
