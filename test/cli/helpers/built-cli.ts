import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { workers } from '../../../tsup.config.js';

const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface BuiltCli {
  /** The executable file (`cli.js`, with its shebang). */
  bin: string;
  /** An empty HOME for its runs, so a test never reads or writes the real ~/.rewindable. */
  home: string;
  remove(): void;
}

/**
 * Builds src/cli/main.ts the way the package build does (tsup, ESM,
 * dependencies left external), but into a private temp directory: the shared
 * dist/ may be in use by other test runs. The directory gets a package.json
 * (`type: module`, like the package) and a link to the repository's
 * node_modules, so the binary resolves its dependencies as an installed one would.
 */
export async function buildCli(): Promise<BuiltCli> {
  const directory = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-cli-')));
  await build({
    // The worker-thread modules too, beside the chunks, as the package has them: large rewinds load them by path.
    entry: {
      cli: path.join(repository, 'src/cli/main.ts'),
      ...Object.fromEntries(Object.entries(workers).map(([name, source]) => [name, path.join(repository, source)])),
    },
    format: ['esm'],
    outDir: directory,
    target: 'node20',
    platform: 'node',
    config: false,
    dts: false,
    clean: false,
    splitting: true,
    sourcemap: false,
    silent: true,
  });
  fs.writeFileSync(path.join(directory, 'package.json'), JSON.stringify({ type: 'module' }));
  fs.symlinkSync(path.join(repository, 'node_modules'), path.join(directory, 'node_modules'));
  fs.mkdirSync(path.join(directory, 'home'));
  return { bin: path.join(directory, 'cli.js'), home: path.join(directory, 'home'), remove: () => fs.rmSync(directory, { recursive: true, force: true }) };
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  cwd?: string;
  /** Added to a clean environment (no colour variables, no REWINDABLE_HOME, an empty HOME). */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input?: string;
}

function cleanEnvironment(cli: BuiltCli, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = { ...process.env, HOME: cli.home };
  for (const name of ['NO_COLOR', 'FORCE_COLOR', 'REWINDABLE_HOME', 'REWINDABLE_DEBUG']) delete environment[name];
  return { ...environment, ...extra };
}

/** Runs the built binary as its own executable (so the shebang is exercised), with pipes for stdio. */
export function runCli(cli: BuiltCli, args: string[], options: CliRunOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli.bin, args, { cwd: options.cwd ?? os.tmpdir(), env: cleanEnvironment(cli, options.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/**
 * Runs the binary and closes its stdout after the first chunk, as `| head -c 10` does: the binary's later
 * writes fail with EPIPE. Only stderr and the exit code are left to look at.
 */
export function runCliClosingStdout(cli: BuiltCli, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cli.bin, args, { cwd: os.tmpdir(), env: cleanEnvironment(cli), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.once('data', () => child.stdout.destroy());
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** True where util-linux `script` can give a child a pseudo-terminal. */
export const canRunInTerminal = spawnSync('script', ['-qec', 'true', '/dev/null'], { stdio: 'ignore' }).status === 0;

/**
 * Runs the binary on a pseudo-terminal (util-linux `script`): stdin, stdout
 * and stderr are all the terminal, as for a person at a shell. `input` is
 * typed into it. The terminal merges the streams and echoes what was typed.
 */
export function runCliInTerminal(cli: BuiltCli, args: string[], options: CliRunOptions = {}): Promise<{ code: number | null; output: string }> {
  const command = [cli.bin, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: options.cwd ?? os.tmpdir(), env: cleanEnvironment(cli, { TERM: 'xterm', ...options.env }) });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: output.replace(/\r\n/g, '\n') }));
    child.stdin.end(options.input ?? '');
  });
}

/** Any ANSI escape sequence (colours, cursor moves). */
export const escapeCode = new RegExp(`${String.fromCharCode(0x1b)}\\[`);
