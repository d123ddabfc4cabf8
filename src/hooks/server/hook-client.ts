import fs from 'node:fs';
import path from 'node:path';
import { defaultStoreDirectory } from '../../store/default-store-directory.js';
import type { HookAnswer } from '../hook-answer.js';
import { parseHookEvent } from '../hook-event.js';
import { buildId, socketDirectory, socketPathOf, type ServerTarget } from './server-address.js';
import { requestServer, ServerNoReply } from './server-connection.js';

/** As `rewindable hook --lock-wait`'s default. */
const defaultLockWaitMs = 20_000;

/** How long a hook waits for a server it started to listen before it does the event itself. */
const startBoundMs = 5_000;

/** On top of the lock wait, how long an event may take in the server before the hook does it itself. */
const eventBoundMs = 120_000;

interface ClientOptions {
  storeDir: string;
  project: string | undefined;
  extraRoots: string[];
  lockWaitMs: number;
}

/**
 * `rewindable hook` as a thin client: reads the event, hands it to the
 * project's resident server (starting one if none runs) and prints its answer
 * in the agent's hook protocol, loading neither zod nor the library. Returns
 * undefined, before reading stdin, for a command line it does not know (help,
 * a malformed option): the full CLI handles those. When no server can be
 * used, the event is handled in this process, exactly as without a server.
 */
export async function runHookClient(args: string[]): Promise<number | undefined> {
  const options = optionsOf(args);
  if (options === undefined || process.stdin.isTTY === true) return undefined;
  const text = await readAll(process.stdin);
  const answer = (await viaServer(text, options)) ?? (await inProcess(text, options));
  if (answer.stdout !== undefined) process.stdout.write(answer.stdout);
  if (answer.stderr !== undefined) process.stderr.write(answer.stderr);
  return answer.exitCode;
}

async function inProcess(text: string, options: ClientOptions): Promise<HookAnswer> {
  const { answerHookText } = await import('../answer-hook.js');
  return await answerHookText(text, options);
}

/** The server's answer, or undefined when the event is to be handled here (ignored, malformed, or no server to be had). */
async function viaServer(text: string, options: ClientOptions): Promise<HookAnswer | undefined> {
  let target: ServerTarget;
  let socketPath: string;
  try {
    const event = parseHookEvent(text);
    if (event.kind === 'ignored') return undefined;
    const project = options.project ?? path.resolve(event.cwd);
    target = { storeDir: options.storeDir, project, projectReal: fs.realpathSync.native(project), extraRoots: options.extraRoots };
    socketPath = socketPathOf(socketDirectory(), target);
  } catch {
    // Every failure here is answered by the in-process path, in the agent's protocol.
    return undefined;
  }
  const build = buildId();
  const request = { type: 'event' as const, build, text, lockWaitMs: options.lockWaitMs, earlyScan: process.env.REWINDABLE_HOOK_EARLY_SCAN !== 'off' };
  let started = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const reply = await requestServer(socketPath, request, options.lockWaitMs + eventBoundMs);
      if (reply.type === 'answer') return reply.answer;
      if (reply.type !== 'restart') return undefined;
      // A server of another build, exiting now: one of this build replaces it.
    } catch (error) {
      // Died or hung in the middle of the event: what it acknowledged is on disk, and the event is done again here.
      if (!(error instanceof ServerNoReply) || error.reason !== 'no-server' || started) return undefined;
    }
    if (!(await startServer(socketPath, target))) return undefined;
    started = true;
  }
  return undefined;
}

/** Starts the server detached, and waits until it listens (true) or the bound passes (false). */
async function startServer(socketPath: string, target: ServerTarget): Promise<boolean> {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    // Loaded only here: most hook calls find their server running.
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [...process.execArgv, script, '__hook-server', socketPath, JSON.stringify(target)], { detached: true, stdio: 'ignore', cwd: '/' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    return false;
  }
  const deadline = Date.now() + startBoundMs;
  let pause = 5;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 50);
    try {
      const reply = await requestServer(socketPath, { type: 'status' }, Math.max(1, deadline - Date.now()));
      if (reply.type === 'status' && reply.build === buildId()) return true;
    } catch {
      // Not listening yet.
    }
  }
  return false;
}

/** The options of `rewindable hook`, or undefined for anything else on the command line. */
function optionsOf(args: string[]): ClientOptions | undefined {
  let storeDir = defaultStoreDirectory();
  let project = nonEmpty(process.env.CLAUDE_PROJECT_DIR) ?? nonEmpty(process.env.GEMINI_PROJECT_DIR);
  const extraRoots: string[] = [];
  let lockWaitMs = defaultLockWaitMs;
  for (let index = 0; index < args.length; index++) {
    const argument = args[index]!;
    const equals = argument.indexOf('=');
    const name = argument.startsWith('--') ? (equals > 0 ? argument.slice(0, equals) : argument) : undefined;
    if (name === undefined || !['--project', '--extra-root', '--lock-wait', '--store'].includes(name)) return undefined;
    const value = equals > 0 ? argument.slice(equals + 1) : args[++index];
    // What the full command line parser would refuse or read differently (`--project --json`, an empty value) is left to it.
    if (value === undefined || value === '' || (equals < 0 && value.startsWith('-'))) return undefined;
    if (name === '--project') project = value;
    else if (name === '--extra-root') extraRoots.push(path.resolve(value));
    else if (name === '--store') storeDir = path.resolve(value);
    else {
      const seconds = Number(value);
      if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0) return undefined;
      lockWaitMs = seconds * 1000;
    }
  }
  return { storeDir, project: project !== undefined ? path.resolve(project) : undefined, extraRoots, lockWaitMs };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value !== '' ? value : undefined;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
