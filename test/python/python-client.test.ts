import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RewindableErrorCode } from '../../src/errors.js';

/**
 * The Python client (examples/python) against the built server, each script a
 * real `python3 -W error` child process; the files on disk are checked from
 * here too, byte for byte. `PYTHON` picks another interpreter (>= 3.9).
 */
const repository = path.resolve(import.meta.dirname, '..', '..');
const examples = path.join(repository, 'examples', 'python');
const python = process.env.PYTHON ?? 'python3';
const pythonVersion = spawnSync(python, ['-c', 'import sys; print(sys.version_info >= (3, 9))'], { encoding: 'utf8' });
const hasPython = pythonVersion.status === 0 && pythonVersion.stdout.trim() === 'True';

let base: string;
let environment: NodeJS.ProcessEnv;

beforeAll(() => {
  if (!hasPython) return;
  if (!fs.existsSync(path.join(repository, 'dist', 'cli.js'))) execFileSync('npm', ['run', 'build'], { cwd: repository, stdio: 'ignore', timeout: 300_000 });
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-python-')));
  fs.mkdirSync(path.join(base, 'tmp'));
  environment = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', REWINDABLE_HOME: path.join(base, 'home'), TMPDIR: path.join(base, 'tmp') };
  delete environment.REWINDABLE_SERVER; // the client's default: this checkout's dist/cli.js
});
afterAll(() => {
  if (base !== undefined) fs.rmSync(base, { recursive: true, force: true });
});

function runPython(args: string[], timeout = 120_000): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(python, ['-W', 'error', ...args], { cwd: repository, env: environment, encoding: 'utf8', timeout });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Every regular file under `root`: relative path -> permission bits and bytes (base64). */
function snapshot(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(root, file)] = `${(fs.statSync(file).mode & 0o777).toString(8)} ${fs.readFileSync(file).toString('base64')}`;
  }
  return files;
}

// Skipped only on a machine without Python 3.9 or later: there is nothing to run the client with.
describe.skipIf(!hasPython)('the Python client', () => {
  it('passes its unittest suite under -W error (errors by code, progress, a server killed mid-call)', () => {
    const run = runPython([path.join(examples, 'test_client.py')]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stderr).toMatch(/\nRan \d\d tests in [\d.]+s\n\nOK\n$/);
    expect(run.stderr).not.toMatch(/Warning|Exception ignored/);
  });

  it('has one RewindableError subclass per RewindableErrorCode of src/errors.ts', () => {
    const run = runPython(['-c', 'import json, sys; sys.path.insert(0, sys.argv[1]); import rewindable; print(json.dumps({code: cls.__name__ for code, cls in rewindable.ERROR_CLASSES.items()}))', examples]);
    expect(run.status, run.stderr).toBe(0);
    const classes = JSON.parse(run.stdout) as Record<string, string>;
    expect(Object.keys(classes).sort()).toEqual(Object.values(RewindableErrorCode).sort());
    expect(classes.SESSION_LOCKED).toBe('SessionLockedError');
  });

  it('harness.py: two turns with a captured shell command, dry run, rewind and undo, checked on disk from here', async () => {
    const project = path.join(base, 'harness-project');
    const store = path.join(base, 'harness-store');
    const originals = {
      'a.txt': Buffer.from('alpha\n'),
      'b.txt': Buffer.from('bravo\n'),
      'c.txt': Buffer.from([0x63, 0x00, 0xff, 0xfe, 0x0a, 0x80]),
      'src/app.py': Buffer.from('print("hello")\r\n'),
    };
    for (const [relative, content] of Object.entries(originals)) {
      fs.mkdirSync(path.dirname(path.join(project, relative)), { recursive: true });
      fs.writeFileSync(path.join(project, relative), content);
    }
    fs.chmodSync(path.join(project, 'c.txt'), 0o755);
    const before = snapshot(project);

    const child = spawn(python, ['-W', 'error', path.join(examples, 'harness.py'), '--project', project, '--store', store, '--step'], { cwd: repository, env: environment });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const seen: Record<string, Record<string, string>> = {};
    let scanned = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const match of stdout.slice(scanned).matchAll(/^STEP (\S+)\n/gm)) {
        seen[match[1]!] = snapshot(project);
        child.stdin.write('\n');
      }
      scanned = stdout.lastIndexOf('\n') + 1;
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toMatch(/\nok\n$/);
    expect(Object.keys(seen)).toEqual(['turns-done', 'rewound', 'undone']);

    const turns = seen['turns-done']!;
    // What the turns did, from here: the shell command deleted a.txt, overwrote b.txt and moved c.txt to d.txt.
    expect(Object.keys(turns).sort()).toEqual(['b.txt', 'd.txt', 'notes.md', 'src/app.py']);
    expect(turns['d.txt']).toBe(before['c.txt']);
    expect(turns['b.txt']).toBe(`${before['b.txt']!.split(' ')[0]} ${Buffer.from('newer\n').toString('base64')}`);
    expect(seen.rewound).toEqual(before);
    expect(seen.undone).toEqual(turns);
    expect(snapshot(project)).toEqual(turns);
  });

  it('README-snippet.py runs with the default server command', () => {
    const run = runPython([path.join(examples, 'README-snippet.py')], 60_000);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toContain('print("hello") False');
    expect(lines).toContain('CHECKPOINT_NOT_FOUND');
    expect(lines.at(-1)).toBe('False True');
  });
});
