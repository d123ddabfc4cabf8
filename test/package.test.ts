import fs from 'node:fs';
import path from 'node:path';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packAndInstall, repository, runJest, type ConsumerProject, type JestReport } from './package/consumer-project.js';

/** The published package, checked as users get it: packed, linted, type-resolved, then installed into a project of its own and used there. */
let packed: ConsumerProject;
/** The strict type-check of every subpath, started as soon as the package is installed (see typeCheckEverySubpath). */
let typeCheck: Promise<string | undefined>;

beforeAll(() => {
  packed = packAndInstall();
  typeCheck = typeCheckEverySubpath(packed.consumer);
}, 240_000);

afterAll(() => packed?.remove());

/** The line docs/packaging.md gives for an ESM bundle that captures: a `require` for the CommonJS code bundled with it. */
const createRequireBanner = "import { createRequire as __rewindableCreateRequire } from 'node:module'; const require = __rewindableCreateRequire(import.meta.url);";

describe('package', () => {
  it('ships only dist, README and LICENSE', () => {
    for (const entry of packed.listing) expect(entry).toMatch(/^(dist\/|README\.md$|LICENSE$|package\.json$)/);
    expect(packed.listing).toContain('dist/index.js');
    expect(packed.listing).toContain('dist/index.cjs');
    expect(packed.listing).toContain('dist/storage/postgres.d.cts');
  });

  it('ships no source maps, and the CLI only as ESM without type declarations', () => {
    expect(packed.listing.filter((entry) => entry.endsWith('.map'))).toEqual([]);
    expect(packed.listing.filter((entry) => /^dist\/cli\./.test(entry))).toEqual(['dist/cli.js']);
  });

  it('names its repository, home page and issue tracker', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(packed.consumer, 'node_modules/rewindable/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.repository).toEqual({ type: 'git', url: 'git+https://github.com/rewindable/rewindable.git' });
    expect(manifest.homepage).toBe('https://github.com/rewindable/rewindable#readme');
    expect(manifest.bugs).toEqual({ url: 'https://github.com/rewindable/rewindable/issues' });
  });

  it('passes publint', () => {
    const output = execFileSync(path.join(repository, 'node_modules/.bin/publint'), ['run', packed.tarball, '--strict', '--pack', 'false'], { encoding: 'utf8' });
    expect(output).not.toMatch(/error|warning/i);
  });

  it('passes are-the-types-wrong for every entry point under node10, node16 and bundler resolution', () => {
    execFileSync(path.join(repository, 'node_modules/.bin/attw'), [packed.tarball, '--format', 'ascii'], { encoding: 'utf8' });
  });

  it('imports with ESM and requires with CommonJS from an installed copy', () => {
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e', "import { CheckpointManager, RewindableError } from 'rewindable'; console.log(typeof CheckpointManager, typeof RewindableError.isInstance)"], { cwd: packed.consumer, encoding: 'utf8' });
    const cjs = execFileSync(process.execPath, ['-e', "const { CheckpointManager, RewindableErrorCode } = require('rewindable'); console.log(typeof CheckpointManager, RewindableErrorCode.NOT_ENABLED)"], { cwd: packed.consumer, encoding: 'utf8' });
    expect(esm.trim()).toBe('function function');
    expect(cjs.trim()).toBe('function NOT_ENABLED');
  });
});

describe('a project that installed the package', () => {
  /** Every test Jest ran passed, and among them one per file case of the consumer's test file and the conformance suite. */
  const expectAllPassed = (report: JestReport, suite: string) => {
    const results = report.testResults.flatMap((file) => file.assertionResults);
    expect(report.testResults.map((file) => file.message).join('\n')).toBe('');
    expect(results.filter((result) => result.status !== 'passed')).toEqual([]);
    expect(results.filter((result) => result.ancestorTitles[0] === suite).map((result) => result.title)).toEqual([
      'rewinds a write made through a built-in tool',
      'rewinds what a captured shell command did',
      'rewinds a write made through an AI SDK tool wrapped by trackTools',
    ]);
    expect(results.filter((result) => result.ancestorTitles[0]?.startsWith('storage conformance: memory')).length).toBeGreaterThan(20);
  };

  it('runs rewindable, rewindable/testing and rewindable/ai-sdk under Jest with its default CommonJS runtime', () => {
    expectAllPassed(runJest(packed.consumer, 'rewindable.jest.cjs', 'commonjs'), 'rewindable under CommonJS Jest');
  }, 120_000);

  it('runs rewindable, rewindable/testing and rewindable/ai-sdk under Jest with its ESM runtime', () => {
    expectAllPassed(runJest(packed.consumer, 'rewindable.jest.mjs', 'esm'), 'rewindable under ESM Jest');
  }, 120_000);

  it('type-checks every subpath, as ESM and as CommonJS, strictly, with skipLibCheck off and without @types/pg', async () => {
    expect(fs.existsSync(path.join(packed.consumer, 'node_modules/@types/pg'))).toBe(false);
    const failure = await typeCheck;
    if (failure !== undefined) throw new Error(`tsc failed:\n${failure}`);
  }, 180_000);

  it('says to install pg with a STORE_IO error when the PostgreSQL store is used without it, from ESM and CommonJS', () => {
    expect(fs.existsSync(path.join(packed.consumer, 'node_modules/pg'))).toBe(false);
    const failures = JSON.parse(execFileSync(process.execPath, ['postgres-without-pg.mjs'], { cwd: packed.consumer, encoding: 'utf8' })) as Record<string, { name: string; code: string; message: string; details: unknown }>;
    for (const build of ['esm', 'cjs']) {
      expect(failures[build]).toMatchObject({ name: 'RewindableError', code: 'STORE_IO', details: { retryable: false, missingPackage: 'pg' } });
      expect(failures[build]!.message).toMatch(/^PostgreSQL storage needs the `pg` package, which could not be loaded \(.*\)\. Install it next to rewindable: `npm install pg`\.$/);
    }
  });

  it('rewindable mcp without the MCP SDK says how to install it, exits 1, and writes nothing to stdout', () => {
    // A project of its own: the Claude Agent SDK the other one installed depends on the MCP SDK.
    const bare = path.join(packed.directory, 'bare');
    fs.mkdirSync(bare);
    fs.writeFileSync(path.join(bare, 'package.json'), '{"name":"bare","private":true}\n');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', packed.tarball], { cwd: bare, stdio: 'pipe' });
    expect(fs.existsSync(path.join(bare, 'node_modules/@modelcontextprotocol/sdk'))).toBe(false);
    const run = spawnSync(process.execPath, [path.join(bare, 'node_modules/rewindable/dist/cli.js'), 'mcp'], { cwd: bare, encoding: 'utf8', input: '' });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('rewindable mcp needs the @modelcontextprotocol/sdk package');
    expect(run.stderr).toContain('npx -y -p rewindable -p @modelcontextprotocol/sdk rewindable mcp');
  });

  /** Bundles a consumer file into one ESM file outside the project (so nothing resolves at run time) and runs it. */
  const bundleAndRun = async (file: string, banner?: string) => {
    const outfile = path.join(packed.directory, 'bundles', file);
    await build({ entryPoints: [path.join(packed.consumer, file)], absWorkingDir: packed.consumer, bundle: true, format: 'esm', platform: 'node', target: 'node20', outfile, logLevel: 'silent', ...(banner === undefined ? {} : { banner: { js: banner } }) });
    return execFileSync(process.execPath, [outfile], { cwd: path.dirname(outfile), encoding: 'utf8', stdio: 'pipe' });
  };

  it('bundled by esbuild as ESM for Node without a banner, checkpoints, writes through a tool and rewinds', async () => {
    expect(await bundleAndRun('bundled-app.mjs')).toBe('first draft\n');
  });

  it('bundled by esbuild as ESM for Node with the createRequire banner, rewinds what its capture scope saw', async () => {
    expect(JSON.parse(await bundleAndRun('bundled-capture-app.mjs', createRequireBanner))).toEqual([['notes.txt', 'first draft\n']]);
  });
});

/**
 * Type-checks the consumer's every-subpath.ts as ESM and as CommonJS, strictly, with skipLibCheck off, so the
 * declarations of every peer are checked too: by far the longest check here (a minute on a loaded 2-core machine).
 * It runs in a process of its own while the other tests use the installed copy, which none of them changes.
 * Resolves to tsc's report when it fails, never rejects (a rejection nobody awaits yet would fail the run).
 */
function typeCheckEverySubpath(consumer: string): Promise<string | undefined> {
  const project = path.join(consumer, 'typed');
  fs.mkdirSync(project, { recursive: true });
  for (const extension of ['mts', 'cts']) fs.copyFileSync(path.join(consumer, 'every-subpath.ts'), path.join(project, `every-subpath.${extension}`));
  const compilerOptions = { strict: true, skipLibCheck: false, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', noEmit: true, types: ['node'] };
  fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['every-subpath.mts', 'every-subpath.cts'] }));
  const typescript = path.join(repository, 'node_modules/typescript/bin/tsc');
  return new Promise((resolve) => {
    execFile(process.execPath, [typescript, '-p', project], { cwd: project, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      resolve(error === null ? undefined : stdout || String(error));
    });
  });
}
