import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Every TypeScript block of the README is type-checked against the built
 * package and run, as a reader would paste it. A block that starts with its
 * own imports and opens its own manager is a whole program; any other block
 * runs after a prelude that opens `manager` on a small project (`cwd`), takes
 * the checkpoint `userMessageId` and lets a tool write a file. A block that
 * needs a model, an API key or a database says so in an HTML comment before
 * it (`<!-- docs-test: compile only, why: declarations -->`); it is only
 * type-checked, with those declarations.
 */
const repository = path.resolve(import.meta.dirname, '..');
// The blocks run in a project outside the repository, where a bare `--import tsx` would not resolve.
const tsxLoader = pathToFileURL(path.join(repository, 'node_modules/tsx/dist/loader.mjs')).href;

interface ReadmeBlock {
  line: number;
  code: string;
  compileOnly: boolean;
  declarations: string;
}

function readmeBlocks(): ReadmeBlock[] {
  const lines = fs.readFileSync(path.join(repository, 'README.md'), 'utf8').split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (lines[index] !== '```ts') continue;
    const end = lines.indexOf('```', index + 1);
    const marker = /^<!-- docs-test: compile only, [^:]*(?::(.*))? -->$/.exec(lines[index - 1] ?? '');
    blocks.push({ line: index + 1, code: lines.slice(index + 1, end).join('\n'), compileOnly: marker !== null, declarations: marker?.[1]?.trim() ?? '' });
    index = end;
  }
  return blocks;
}

const preludeImports: Record<string, string[]> = {
  'node:crypto': ['default as crypto'],
  'node:fs/promises': ['default as fs'],
  'node:path': ['default as path'],
  rewindable: ['CheckpointManager', 'RewindableError', 'RewindableErrorCode', 'cleanup', 'createTools', 'filesystemStorage', 'listSessions'],
};

const preludeBody = `
const cwd = process.cwd();
const manager = await CheckpointManager.open({ cwd });
const userMessageId = (await manager.recordUserMessage('Make app.ts export 1')).uuid;
await manager.tools.write({ file_path: 'src/app.ts', content: 'export const app = 1;\\n' });
`;

/** Names a block's own `import` lines bind: the prelude leaves those out. */
function importedNames(imports: string): Set<string> {
  const names = new Set<string>();
  for (const [, defaultName, list] of imports.matchAll(/^import\s+(?:type\s+)?(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from/gm)) {
    if (defaultName !== undefined) names.add(defaultName);
    for (const part of list?.split(',') ?? []) {
      const name = part.trim().replace(/^type\s+/, '').split(/\s+as\s+/).at(-1)!.trim();
      if (name !== '') names.add(name);
    }
  }
  return names;
}

function programOf(block: ReadmeBlock): string {
  const lines = block.code.split('\n');
  const firstBody = lines.findIndex((line) => line.trim() !== '' && !line.startsWith('import '));
  const imports = [block.declarations.match(/import[^;]*;/g)?.join('\n') ?? '', lines.slice(0, firstBody).join('\n')].join('\n');
  const declarations = block.declarations.replace(/import[^;]*;/g, '').trim();
  const own = importedNames(imports);
  const prelude = Object.entries(preludeImports)
    .map(([from, names]) => {
      const kept = names.filter((name) => !own.has(name.split(' as ').at(-1)!));
      if (kept.length === 0) return '';
      const defaultName = kept.find((name) => name.startsWith('default as '));
      return defaultName !== undefined ? `import ${defaultName.slice('default as '.length)} from '${from}';` : `import { ${kept.join(', ')} } from '${from}';`;
    })
    .join('\n');
  // The block runs in its own scope, so it may open a `manager` of its own (shadowing the prelude's).
  return [prelude, imports, declarations, preludeBody, '{', lines.slice(firstBody).join('\n'), '}', 'await manager.close();', ''].join('\n');
}

let workDirectory: string;
let blocks: ReadmeBlock[];

beforeAll(() => {
  if (!fs.existsSync(path.join(repository, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  // Inside the repository, so `import 'rewindable'` resolves to this package (its `exports`) as it does for a user.
  fs.mkdirSync(path.join(repository, '.docs-test'), { recursive: true });
  workDirectory = fs.mkdtempSync(path.join(repository, '.docs-test', 'readme-'));
  blocks = readmeBlocks();
  blocks.forEach((block, index) => fs.writeFileSync(path.join(workDirectory, `block-${index}.ts`), programOf(block)));
  fs.writeFileSync(
    path.join(workDirectory, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, skipLibCheck: true, types: ['node'], typeRoots: [path.join(repository, 'node_modules/@types')] },
      include: ['*.ts'],
    }),
  );
});

afterAll(() => fs.rmSync(workDirectory, { recursive: true, force: true }));

function seededProject(): string {
  const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-readme-project-')));
  fs.mkdirSync(path.join(project, 'src'));
  fs.writeFileSync(path.join(project, 'src/app.ts'), 'export const app = 0;\n');
  const notebook = { cells: [{ cell_type: 'code', id: 'a1', metadata: {}, source: ['df.head()'], outputs: [], execution_count: null }], metadata: {}, nbformat: 4, nbformat_minor: 5 };
  fs.writeFileSync(path.join(project, 'analysis.ipynb'), `${JSON.stringify(notebook, null, 1)}\n`);
  return project;
}

describe('the README examples', () => {
  it('type-check against the built package', () => {
    expect(blocks.length).toBeGreaterThan(10);
    try {
      execFileSync(process.execPath, [path.join(repository, 'node_modules/typescript/bin/tsc'), '-p', workDirectory], { encoding: 'utf8' });
    } catch (error) {
      const output = (error as { stdout?: string }).stdout ?? String(error);
      const located = output.replace(/block-(\d+)\.ts\((\d+)/g, (_, index: string, line: string) => `README block at line ${blocks[Number(index)]!.line} (program line ${line}`);
      throw new Error(`README examples do not type-check:\n${located}`);
    }
  }, 120_000);

  it('run on a real project and store', () => {
    const runnable = blocks.map((block, index) => ({ block, index })).filter(({ block }) => !block.compileOnly);
    expect(runnable.length).toBeGreaterThan(10);
    for (const { block, index } of runnable) {
      const project = seededProject();
      const store = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-readme-store-'));
      try {
        execFileSync(process.execPath, ['--import', tsxLoader, path.join(workDirectory, `block-${index}.ts`)], {
          cwd: project,
          env: { ...process.env, REWINDABLE_HOME: store, NO_COLOR: '1' },
          encoding: 'utf8',
          stdio: 'pipe',
          timeout: 60_000,
        });
      } catch (error) {
        throw new Error(`README block at line ${block.line} failed:\n${(error as { stderr?: string }).stderr ?? String(error)}`);
      } finally {
        fs.rmSync(project, { recursive: true, force: true });
        fs.rmSync(store, { recursive: true, force: true });
      }
    }
  }, 300_000);
});
