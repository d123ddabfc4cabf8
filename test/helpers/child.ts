import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'session-worker.ts');

export interface WorkerRun {
  child: ChildProcess;
  /** Every JSON line printed so far. */
  lines: unknown[];
  /** Resolves when a printed line satisfies `match`. */
  waitFor(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: Record<string, unknown>[] }>;
}

/** Starts the session worker in a real child process. */
export function runWorker(script: { options: object; steps: object[] }): WorkerRun {
  const child = spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(script)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: Array<{ match: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }> = [];
  let buffered = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.match(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: Record<string, unknown>[] }>((resolve) => {
    child.on('close', (code, signal) => {
      if (code !== 0 && signal === null && stderr.trim() !== '') process.stderr.write(stderr);
      resolve({ code, signal, lines });
    });
  });
  return {
    child,
    lines,
    done,
    waitFor(match) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void done.then(() => reject(new Error(`worker ended before the expected line; printed: ${JSON.stringify(lines)}\n${stderr}`)));
      });
    },
  };
}
