import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SessionProcessCommand, SessionProcessOptions } from './session-process-worker.js';

const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'session-process-worker.ts');

export interface SessionProcess {
  /** Sends one command and resolves with the worker's answer to it. */
  send(command: SessionProcessCommand): Promise<Record<string, unknown>>;
  /** Ends the worker: its stdin closes, and it exits once the last command is answered, open session or not. */
  end(): Promise<void>;
}

/** Starts the session worker in a real child process. */
export function startSessionProcess(options: SessionProcessOptions): SessionProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', worker, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const waiting: Array<(answer: Record<string, unknown>) => void> = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(JSON.parse(line) as Record<string, unknown>));
  return {
    send(command) {
      return new Promise((resolve, reject) => {
        waiting.push(resolve);
        child.stdin.write(`${JSON.stringify(command)}\n`);
        void exited.then(() => reject(new Error(`the session worker exited before answering ${JSON.stringify(command)}:\n${stderr}`)));
      });
    },
    async end() {
      child.stdin.end();
      await exited;
    },
  };
}
