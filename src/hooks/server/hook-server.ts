import fs from 'node:fs';
import net from 'node:net';
import { RewindableError, RewindableErrorCode } from '../../errors.js';
import { rewindableSessionIdOf } from '../agent-session-id.js';
import { answerHookText, type HookRunner } from '../answer-hook.js';
import type { HookAnswer } from '../hook-answer.js';
import { buildId, type ServerReply, type ServerRequest, type ServerStatus, type ServerTarget } from './server-address.js';
import { requestServer } from './server-connection.js';
import { ResidentSessions } from './resident-sessions.js';
import { Turns } from './turns.js';
import { WaitingEvents } from './waiting-events.js';

/** Seconds a server waits for the next event before it exits. */
const defaultIdleSeconds = 600;

/** How long a session's early first scan waits for the events before it (it waits for nothing else that long). */
const earlyScanWaitMs = 60_000;

/**
 * How much longer than its lock wait an event waits in the queue while a
 * session's early first scan is queued or running: a Bash event of that
 * session waits for the whole scan, which on a large project outlasts the lock
 * wait (20 s by default), and the event would be refused for it. Other events
 * stop the scan, but wait for its walk of the project (seconds at 500,000
 * files). Below the client's own bound on an event (lock wait + 120 s).
 */
const earlyScanGraceMs = 100_000;

/** How long a session's early first scan waits for another process to let go of the session before it leaves the scan to the first Bash hook. */
const earlyScanLockWaitMs = 1_000;

/**
 * For tests only, never set by users: `REWINDABLE_HOOK_TEST_EARLY_SCAN_HOLD=N` makes the first early scan of the
 * server wait, after its N-th file, until an event is queued, so that the event surely comes in the middle of it.
 */
const testHoldVariable = 'REWINDABLE_HOOK_TEST_EARLY_SCAN_HOLD';

/** A request line larger than this is refused (a Write's content is in its hook input). */
const maximumRequestBytes = 256 * 1024 * 1024;

/**
 * The resident hook server of one project (`cli.js __hook-server SOCKET
 * TARGET`), started detached by the first hook call that finds none. It
 * handles the events its clients send, one at a time, in sessions it keeps
 * open (see `ResidentSessions`), and answers each only once its backups are
 * durable. It exits after `$REWINDABLE_HOOK_SERVER_IDLE` seconds without an
 * event (600 by default), on SIGTERM or SIGINT, when told to stop, and when a
 * client of another build connects. It keeps nothing that is not on disk.
 */
export async function runHookServer(args: string[]): Promise<void> {
  const [socketPath, targetText] = args;
  if (socketPath === undefined || targetText === undefined) {
    process.exitCode = 2;
    return;
  }
  const target = JSON.parse(targetText) as ServerTarget;
  const build = buildId();
  const idleMs = idleSecondsOf(process.env.REWINDABLE_HOOK_SERVER_IDLE) * 1000;
  const sessions = new ResidentSessions();
  const startedAt = new Date().toISOString();
  const turns = new Turns();
  let busy = 0;
  let events = 0;
  /** Sessions' first scans run ahead of their first Bash hook (`completed`), or given way to an event (`stopped`), for `rewindable hooks status`. */
  const earlyScans = { completed: 0, stopped: 0 };
  let earlyScansPending = 0;
  const waiting = new WaitingEvents();
  let testHoldAfterFiles = holdOf(process.env[testHoldVariable]);
  let lastEventEnded = Date.now();
  let stopping = false;
  let idleTimer: NodeJS.Timeout | undefined;

  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      if (done) return;
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes > maximumRequestBytes) {
        done = true;
        socket.destroy();
        return;
      }
      if (!chunk.includes(0x0a)) return;
      done = true;
      const text = Buffer.concat(chunks).toString('utf8');
      let request: ServerRequest;
      try {
        request = JSON.parse(text.slice(0, text.indexOf('\n'))) as ServerRequest;
      } catch {
        socket.destroy();
        return;
      }
      void respond(request).then(
        (reply) => {
          socket.end(`${JSON.stringify(reply)}\n`);
          startEarlyScans();
        },
        () => {
          socket.destroy();
          startEarlyScans();
        },
      );
    });
  });

  async function respond(request: ServerRequest): Promise<ServerReply> {
    if (request.type === 'status') return status();
    if (request.type === 'stop') {
      setImmediate(() => void shutdown());
      return { type: 'stopping' };
    }
    if (request.build !== build || stopping) {
      // A client of another build: a server of its own build takes over this socket.
      if (request.build !== build) setImmediate(() => void shutdown());
      return { type: 'restart' };
    }
    busy += 1;
    clearTimeout(idleTimer);
    const options = { storeDir: target.storeDir, project: target.project, extraRoots: target.extraRoots, lockWaitMs: request.lockWaitMs };
    const earlyScan = request.earlyScan !== false;
    // Behind a session's early first scan an event waits, up to `earlyScanGraceMs` more than its lock wait: a Bash
    // event of that session for the scan's end, any other for the scan to give way (see `WaitingEvents`).
    const run: HookRunner = (event, given) => {
      const sessionId = rewindableSessionIdOf(event.sessionId);
      const begun = waiting.add(sessionId, event.kind === 'shell-before' || event.kind === 'shell-after');
      return turns
        .run(
          given.lockWaitMs + (earlyScansPending > 0 ? earlyScanGraceMs : 0),
          (leftMs) => {
            begun();
            return sessions.run(event, { ...given, lockWaitMs: Math.min(leftMs, given.lockWaitMs) }, earlyScan);
          },
          () => lockedByEarlierEvent(sessionId),
        )
        .finally(begun);
    };
    try {
      return { type: 'answer', answer: (await answerHookText(request.text, options, run)) satisfies HookAnswer };
    } finally {
      busy -= 1;
      events += 1;
      lastEventEnded = Date.now();
      armIdleTimer();
    }
  }

  function status(): ServerStatus {
    return { type: 'status', pid: process.pid, build, target, startedAt, idleMs: busy > 0 ? 0 : Date.now() - lastEventEnded, events, earlyScans: { ...earlyScans } };
  }

  /**
   * The first scan of each session whose first prompt was just answered, in
   * a turn of its own after it (see `ResidentSessions.scanEarly`): started
   * once the answer is on its way, so the prompt does not wait for it. A Bash
   * event of the session that comes meanwhile waits for the scan's end in its
   * turn, within its lock wait plus `earlyScanGraceMs`. Any other event stops
   * the scan, or keeps it from starting (see `WaitingEvents`): the scan is
   * due again, and started again here once that event is answered, unless a
   * Bash hook has taken the session's first scan by then.
   */
  function startEarlyScans(): void {
    for (const { sessionId, options } of sessions.takeEarlyScans()) {
      if (stopping) return;
      busy += 1;
      earlyScansPending += 1;
      clearTimeout(idleTimer);
      // The lock is not waited for long: a session another process holds gets its first scan from its first Bash hook.
      const lockWaitMs = Math.min(options.lockWaitMs, earlyScanLockWaitMs);
      const scan = turns.run(
        earlyScanWaitMs,
        async () => {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (stopping) return 'left';
          if (waiting.scanGivesWay(sessionId)) {
            sessions.scanEarlyLater(sessionId, options);
            return 'stopped';
          }
          const holdAfterFiles = testHoldAfterFiles;
          testHoldAfterFiles = undefined;
          return sessions.scanEarly(sessionId, { ...options, lockWaitMs }, waiting.betweenFiles(sessionId, holdAfterFiles));
        },
        () => new Error('earlier events outlasted the wait'),
      );
      void scan
        .then((outcome) => {
          if (outcome === 'scanned') earlyScans.completed += 1;
          else if (outcome === 'stopped') earlyScans.stopped += 1;
        })
        .catch(() => undefined)
        .finally(() => {
          busy -= 1;
          earlyScansPending -= 1;
          armIdleTimer();
        });
    }
  }

  function armIdleTimer(): void {
    clearTimeout(idleTimer);
    if (busy > 0 || stopping) return;
    idleTimer = setTimeout(() => void shutdown(), idleMs);
  }

  /** The socket file this server made: one that replaced it (a newer server's) is never removed. */
  const listening = { identity: undefined as string | undefined };
  async function shutdown(): Promise<void> {
    if (stopping) return;
    stopping = true;
    clearTimeout(idleTimer);
    // New connections are refused from here; the events already queued are finished and answered.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    if (listening.identity !== undefined && identityOf(socketPath!) === listening.identity) fs.rmSync(socketPath!, { force: true });
    await turns.idle();
    // Their answers written before the process ends; a client that never sends its request is not waited for long.
    await Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, 5_000))]);
    await sessions.closeAll();
    process.exit(0);
  }

  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  if (!(await listen(server, socketPath))) return;
  fs.chmodSync(socketPath, 0o600);
  listening.identity = identityOf(socketPath);
  armIdleTimer();
}

/**
 * Listens on the socket; false when a live server answers on it already (two
 * clients started a server at once). A socket file nobody listens on is
 * left from a server that died: it is replaced.
 */
async function listen(server: net.Server, socketPath: string): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 0) throw error;
    }
    try {
      await requestServer(socketPath, { type: 'status' }, 2000);
      return false;
    } catch {
      fs.rmSync(socketPath, { force: true });
    }
  }
}

/** An event that waited its whole lock wait behind earlier events (one of them waiting for a process that holds the session). */
function lockedByEarlierEvent(sessionId: string): RewindableError {
  return new RewindableError(
    RewindableErrorCode.SESSION_LOCKED,
    `Session ${sessionId} is locked: earlier hook events of this project are still waiting for it, or being handled. Nothing was written.`,
  );
}

function identityOf(file: string): string | undefined {
  try {
    const stat = fs.lstatSync(file);
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

function holdOf(given: string | undefined): number | undefined {
  const files = given !== undefined && given.trim() !== '' ? Number(given) : Number.NaN;
  return Number.isInteger(files) && files > 0 ? files : undefined;
}

function idleSecondsOf(given: string | undefined): number {
  const seconds = given !== undefined && given.trim() !== '' ? Number(given) : defaultIdleSeconds;
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 24 * 60 * 60) : defaultIdleSeconds;
}
