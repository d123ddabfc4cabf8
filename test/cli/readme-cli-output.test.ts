import fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureCliSection, cliSectionOf } from '../../scripts/capture-cli-output.js';
import { buildCli, type BuiltCli } from './helpers/built-cli.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

it('the README shows what the CLI prints (regenerate with: npx tsx scripts/capture-cli-output.ts)', async () => {
  const captured = await captureCliSection(cli);

  expect(cliSectionOf(fs.readFileSync('README.md', 'utf8'))).toBe(captured);
});
