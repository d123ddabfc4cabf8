import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MirrorWorkerScript } from './mirror-worker.js';

const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mirror-worker.ts');

/** Runs the mirror worker in a real child process; resolves with its exit code, printed lines and error output. */
export function runMirrorWorker(script: MirrorWorkerScript): Promise<{ code: number | null; lines: Array<Record<string, unknown>>; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(script)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = stdout
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ code, lines, stderr });
    });
  });
}
