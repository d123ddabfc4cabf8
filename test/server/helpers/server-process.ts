import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import { buildCli } from '../../cli/helpers/built-cli.js';

export interface BuiltServer {
  /** The built `cli.js`. */
  cli: string;
  /** An empty HOME, so no run touches the real ~/.rewindable. */
  home: string;
  remove(): void;
}

/** The CLI built as the package has it, into a private directory (see `buildCli`). */
export async function buildServer(): Promise<BuiltServer> {
  const built = await buildCli();
  return { cli: built.bin, home: built.home, remove: built.remove };
}

export interface RpcError {
  code: number;
  message: string;
  data?: { code: string; details?: Record<string, unknown> };
}

/** Any message the server printed: a response (`id`) or a notification (`method`). */
export interface Message {
  jsonrpc: '2.0';
  id?: string | number | null;
  result?: unknown;
  error?: RpcError;
  method?: string;
  params?: Record<string, unknown>;
}

/** A failed call, with the server's error object. */
export class CallError extends Error {
  constructor(readonly error: RpcError) {
    super(`${error.code}: ${error.message}`);
  }
}

export interface ServerProcess {
  child: ChildProcessWithoutNullStreams;
  /** Every message printed so far, in order. */
  messages: Message[];
  /** Every stdout line, as printed (each must be one JSON message). */
  stdoutLines: string[];
  stderr(): string;
  /** Sends a request and resolves with its response. */
  request(method: string, params?: unknown, extra?: { id?: string | number }): Promise<Message>;
  /** Sends a request and resolves with its result; a response with an error rejects with a CallError. */
  call<T = Record<string, unknown>>(method: string, params?: unknown): Promise<T>;
  /** Writes raw bytes to stdin (a line must bring its own newline). */
  write(text: string | Buffer): void;
  /** Resolves with the first message from index `from` on that satisfies `match`. */
  waitFor(match: (message: Message) => boolean, from?: number): Promise<Message>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node cli.js serve --stdio` as a real child process. */
export function startServer(server: BuiltServer, options: { args?: string[]; env?: Record<string, string> } = {}): ServerProcess {
  const environment: NodeJS.ProcessEnv = { ...process.env, HOME: server.home, ...options.env };
  delete environment.REWINDABLE_HOME;
  const child = spawn(process.execPath, [server.cli, 'serve', '--stdio', ...(options.args ?? [])], { cwd: os.tmpdir(), env: environment, stdio: ['pipe', 'pipe', 'pipe'] });
  const messages: Message[] = [];
  const stdoutLines: string[] = [];
  const waiters: Array<{ match: (message: Message) => boolean; from: number; resolve: (message: Message) => void }> = [];
  let partial = '';
  let stderr = '';
  let nextId = 1;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      stdoutLines.push(line);
      messages.push(JSON.parse(line) as Message);
    }
    if (lines.length === 0) return;
    for (const waiter of [...waiters]) {
      const found = messages.slice(waiter.from).find(waiter.match);
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(found);
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on('error', () => {}); // writes after the server exited: the test looks at what it answered before
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));

  const waitFor = (match: (message: Message) => boolean, from = 0) =>
    new Promise<Message>((resolve, reject) => {
      const found = messages.slice(from).find(match);
      if (found !== undefined) return resolve(found);
      waiters.push({ match, from, resolve });
      void exited.then(() => reject(new Error(`the server exited before answering; stderr: ${stderr}`)));
    });
  const request = (method: string, params?: unknown, extra: { id?: string | number } = {}) => {
    const id = extra.id ?? nextId++;
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) })}\n`);
    return waitFor((message) => message.id === id && message.method === undefined);
  };
  return {
    child,
    messages,
    stdoutLines,
    stderr: () => stderr,
    request,
    async call<T>(method: string, params?: unknown) {
      const response = await request(method, params);
      if (response.error !== undefined) throw new CallError(response.error);
      return response.result as T;
    },
    write: (text) => child.stdin.write(text),
    waitFor,
    exited,
  };
}
