import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { afterEach } from 'vitest';
import { bundledWorker } from './bundle.js';

/** A bundled worker the test talks to: JSON lines out, text lines in. */
export interface TalkingChild {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** The next JSON line the child prints (each line is handed out once, in order). */
  next(): Promise<Record<string, unknown>>;
  /** Sends one line on the child's stdin. */
  send(line: string): void;
  /** Resolves when the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: TalkingChild[] = [];
afterEach(() => {
  for (const talking of running.splice(0)) talking.child.kill('SIGKILL');
});

/**
 * Starts the bundled worker `name` (test/durability/workers/<name>.ts) with
 * one JSON argument; with `launcher`, through that command (such as
 * `unshare ...`), which then runs node.
 */
export async function startTalkingChild(name: string, argument: unknown, launcher: readonly string[] = []): Promise<TalkingChild> {
  const command = [...launcher, process.execPath, await bundledWorker(name), JSON.stringify(argument)];
  const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<{ resolve: (line: Record<string, unknown>) => void; reject: (error: Error) => void }> = [];
  let buffered = '';
  let stderr = '';
  let read = 0;
  let ended = false;
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      lines.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
      buffered = buffered.slice(newline + 1);
      while (waiting.length > 0 && read < lines.length) waiting.shift()!.resolve(lines[read++]!);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      ended = true;
      for (const waiter of waiting.splice(0)) waiter.reject(new Error(`${name} exited (${code ?? signal}) before printing the expected line:\n${stderr}`));
      resolve({ code, signal });
    }),
  );
  const talking: TalkingChild = {
    child,
    exited,
    send: (line) => child.stdin.write(`${line}\n`),
    next: () => {
      if (read < lines.length) return Promise.resolve(lines[read++]!);
      if (ended) return Promise.reject(new Error(`${name} has exited:\n${stderr}`));
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
  };
  running.push(talking);
  return talking;
}
