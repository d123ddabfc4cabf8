import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

/** The repository, whose node_modules hold the tools a consumer runs (Jest, TypeScript, esbuild). */
export const repository = path.resolve(import.meta.dirname, '../..');
/** Files a consumer project runs or type-checks, copied into it. */
export const consumerFiles = path.join(import.meta.dirname, 'consumer');

/** Peer dependencies a consumer type-checking every subpath needs, at the versions this repository tests with. */
const typedPeers = ['ai', '@langchain/core', 'langchain', '@openai/agents', '@anthropic-ai/claude-agent-sdk', '@types/node'];

export interface ConsumerProject {
  /** The temp directory all of this lives in. */
  directory: string;
  /** The packed package (`npm pack` of the built repository). */
  tarball: string;
  /** Paths in the tarball, without the `package/` prefix. */
  listing: string[];
  /** A project that installed the tarball and the integrations' peers, but not `pg` or `@types/pg`. */
  consumer: string;
  remove(): void;
}

/**
 * Packs the built repository as `npm publish` would (its prepack build is
 * skipped: `npm test` has just built dist) and installs the tarball into a
 * fresh project outside the repository, as a user would.
 */
export function packAndInstall(): ConsumerProject {
  if (!fs.existsSync(path.join(repository, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does).');
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-pack-')));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', directory], { cwd: repository, encoding: 'utf8' }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const tarball = path.join(directory, packed[0]!.filename);
  const consumer = path.join(directory, 'consumer');
  fs.mkdirSync(consumer);
  fs.writeFileSync(path.join(consumer, 'package.json'), '{"name":"consumer","private":true}\n');
  const peers = typedPeers.map((name) => `${name}@${installedVersion(name)}`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, ...peers], { cwd: consumer, stdio: 'pipe' });
  for (const file of fs.readdirSync(consumerFiles)) fs.copyFileSync(path.join(consumerFiles, file), path.join(consumer, file));
  return { directory, tarball, listing: packed[0]!.files.map((file) => file.path), consumer, remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
}

function installedVersion(name: string): string {
  return (JSON.parse(fs.readFileSync(path.join(repository, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

export interface JestReport {
  numFailedTests: number;
  numPassedTests: number;
  testResults: Array<{ message: string; assertionResults: Array<{ ancestorTitles: string[]; title: string; status: string }> }>;
}

/** Runs the repository's Jest over one test file of the consumer, as its own `jest` would; returns Jest's JSON report. */
export function runJest(consumer: string, testFile: string, runtime: 'commonjs' | 'esm'): JestReport {
  const report = path.join(consumer, `${testFile}.report.json`);
  const config = { rootDir: consumer, testMatch: [`<rootDir>/${testFile}`], transform: {}, cacheDirectory: path.join(consumer, '.jest-cache') };
  const nodeOptions = runtime === 'esm' ? ['--experimental-vm-modules'] : [];
  try {
    execFileSync(process.execPath, [...nodeOptions, path.join(repository, 'node_modules/jest/bin/jest.js'), '--ci', '--no-watchman', '--json', '--outputFile', report, '--config', JSON.stringify(config)], {
      cwd: consumer,
      stdio: 'pipe',
    });
  } catch (error) {
    // A failing run still writes its report, which says what failed; without one, Jest's own output does.
    if (!fs.existsSync(report)) throw new Error(`Jest did not run: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
  return JSON.parse(fs.readFileSync(report, 'utf8')) as JestReport;
}
