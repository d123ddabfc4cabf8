import { LineSplitter, maxLineBytes, messageLine, type Line } from './framing.js';
import { ErrorCode, errorObject, invalidParams, parseRequest, ProtocolError, type ErrorObject, type Request, type RequestId } from './json-rpc.js';
import { methods, type CallContext, type Method } from './methods.js';
import { SessionHandles } from './session-handles.js';

export interface ServeOptions {
  input: NodeJS.ReadableStream;
  /** Protocol messages only. */
  output: NodeJS.WritableStream;
  /** Logs, for people. */
  log: (line: string) => void;
  /** The store of a request that names none. */
  defaultStore: string;
}

/**
 * One connection: JSON-RPC 2.0 requests in, one per line; responses and
 * notifications out. Requests of one session are run in the order they came;
 * those of different sessions run side by side, so their responses may come
 * out of order (match them by id). On `shutdown`, at the end of input or on
 * `stop()`, the requests already read finish, every session is closed
 * (releasing its lock) and `finished` resolves: with 0, or 1 if a session
 * failed to close. The answer to `shutdown` is sent once all that is done.
 */
export class Connection {
  readonly finished: Promise<0 | 1>;
  private readonly sessions = new SessionHandles();
  private readonly running = new Set<Promise<unknown>>();
  private readonly splitter = new LineSplitter();
  private stopping: Promise<void> | undefined;
  private markFinished!: (code: 0 | 1) => void;

  constructor(private readonly options: ServeOptions) {
    this.finished = new Promise((resolve) => (this.markFinished = resolve));
    const { input } = options;
    input.on('data', this.read);
    input.on('end', this.endOfInput);
    input.on('error', this.endOfInput);
  }

  /** Stops reading, lets the requests already read finish, closes every session. Safe to call again. */
  stop(): Promise<void> {
    this.stopping ??= this.closeEverything();
    return this.stopping;
  }

  private async closeEverything(): Promise<void> {
    this.options.input.off('data', this.read);
    this.options.input.off('end', this.endOfInput);
    // Taken before the shutdown request that may have called stop() is counted: it waits for the others, not itself.
    const others = [...this.running];
    await Promise.allSettled(others);
    let exitCode: 0 | 1 = 0;
    try {
      await this.sessions.closeAll();
    } catch (error) {
      exitCode = 1;
      this.options.log(`rewindable serve: a session failed to close: ${errorObject(error).message}`);
    }
    // The input may still be open (a shutdown request): let it go, so nothing keeps the process alive.
    (this.options.input as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
    this.markFinished(exitCode);
  }

  private readonly read = (chunk: Buffer | string): void => {
    for (const line of this.splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk))) this.answer(line);
  };

  private readonly endOfInput = (): void => {
    for (const line of this.splitter.end()) this.answer(line);
    void this.stop();
  };

  /** Answers one line. Everything up to the handler's start runs now, so `running` holds every request read so far. */
  private answer(line: Line): void {
    if (this.stopping !== undefined) return;
    if (line.kind === 'oversized') {
      this.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.invalidRequest, message: `Invalid request: the line is ${line.bytes} bytes, over the limit of ${maxLineBytes} bytes (16 MiB); it was discarded.` } });
      return;
    }
    if (line.kind === 'not-utf8') {
      this.send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.parseError, message: 'Parse error: the line is not valid UTF-8.' } });
      return;
    }
    if (line.text.trim() === '') return;
    const parsed = parseRequest(line.text);
    if ('error' in parsed) {
      this.send({ jsonrpc: '2.0', id: parsed.id, error: parsed.error });
      return;
    }
    const { request } = parsed;
    const outcome = this.call(request);
    this.running.add(outcome);
    void outcome.then(
      (result) => this.respond(request, { result }),
      (error: unknown) => this.respond(request, { error: this.logged(request, error) }),
    ).finally(() => this.running.delete(outcome));
  }

  /** Runs the request's handler; validation failures reject like the handler's own. */
  private call(request: Request): Promise<unknown> {
    try {
      const method: Method | undefined = Object.hasOwn(methods, request.method) ? methods[request.method as keyof typeof methods] : undefined;
      if (method === undefined) throw new ProtocolError(ErrorCode.methodNotFound, `Method not found: ${JSON.stringify(request.method)}. Call initialize for the list of methods.`);
      const parsed = method.params.safeParse(request.params ?? {});
      if (!parsed.success) throw invalidParams(request.method, parsed.error);
      const { progressToken, ...params } = parsed.data as { progressToken?: string | number };
      return method.run(params, this.contextFor(progressToken));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private contextFor(progressToken: string | number | undefined): CallContext {
    return {
      sessions: this.sessions,
      defaultStore: this.options.defaultStore,
      progress: progressToken === undefined ? undefined : progressSender(progressToken, (params) => this.send({ jsonrpc: '2.0', method: 'progress', params })),
      shutdown: () => this.stop(),
    };
  }

  private respond(request: Request, answer: { result: unknown } | { error: ErrorObject }): void {
    if (request.id === undefined) return; // a notification gets no answer
    try {
      this.send({ jsonrpc: '2.0', id: request.id, ...answer });
    } catch (error) {
      this.send({ jsonrpc: '2.0', id: request.id, error: this.logged(request, error) });
    }
  }

  /** The error object for a failed request; unexpected failures are logged with their stack. */
  private logged(request: Request, error: unknown): ErrorObject {
    const object = errorObject(error);
    if (object.code === ErrorCode.internalError) {
      this.options.log(`rewindable serve: ${request.method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    return object;
  }

  private send(message: { jsonrpc: '2.0'; id?: RequestId; result?: unknown; error?: ErrorObject; method?: string; params?: unknown }): void {
    this.options.output.write(messageLine(message));
  }
}

/**
 * Progress notifications for one request: the first, then at most one per
 * hundredth of the total, then the last, so a diff of 100 000 files sends
 * about a hundred lines, not 100 000.
 */
function progressSender(progressToken: string | number, notify: (params: object) => void): (update: { done: number; total: number; path: string }) => void {
  let lastSent = -Infinity;
  return ({ done, total, path }) => {
    const step = Math.max(1, Math.floor(total / 100));
    if (done !== total && done - lastSent < step) return;
    lastSent = done;
    notify({ progressToken, done, total, path });
  };
}
