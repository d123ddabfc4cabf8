/**
 * A process that drives one session through a shared store (PostgreSQL, or
 * a mirror over it), one command at a time: each JSON line read on stdin is
 * carried out and answered with one JSON line on stdout, an error included
 * (as `{ error: { code, message } }`), so a test can interleave two writers
 * exactly. Usage: node --import tsx session-process-worker.ts '<json options>'
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { CheckpointManager, filesystemStorage, type StorageAdapter } from '../../../src/index.js';
import { mirroredStorage } from '../../../src/store/mirror/mirrored-storage.js';
import { postgresStorage } from '../../../src/store/postgres/postgres-storage.js';

export type SessionProcessStorage = { kind: 'postgres'; connection: string } | { kind: 'mirror'; connection: string; localDirectory: string };

export interface SessionProcessOptions {
  cwd: string;
  storage: SessionProcessStorage;
}

export type SessionProcessCommand =
  | { do: 'open'; resume?: string }
  | { do: 'checkpoint'; id: string }
  /** trackEdit, then the write only if tracking succeeded: a writer that is refused changes nothing. */
  | { do: 'edit'; path: string; content: string }
  | { do: 'rewind'; id: string }
  | { do: 'flush'; timeoutMs?: number }
  | { do: 'close' };

const options = JSON.parse(process.argv[2]!) as SessionProcessOptions;

function openStorage(settings: SessionProcessStorage): StorageAdapter {
  const remote = postgresStorage({ connection: settings.connection, retryDelayMs: 50 });
  if (settings.kind === 'postgres') return remote;
  return mirroredStorage({ local: filesystemStorage({ directory: settings.localDirectory, durability: 'none' }), remote, retry: { initialDelayMs: 20, maxDelayMs: 200 } });
}

const storage = openStorage(options.storage);
let manager: CheckpointManager | undefined;

async function carryOut(command: SessionProcessCommand): Promise<Record<string, unknown>> {
  switch (command.do) {
    case 'open':
      manager = await CheckpointManager.open({ cwd: options.cwd, storage, durability: 'none', ...(command.resume !== undefined ? { resume: command.resume } : {}) });
      return { opened: manager.sessionId };
    case 'checkpoint':
      return { checkpoint: await manager!.checkpoint(command.id) };
    case 'edit':
      await manager!.trackEdit(command.path);
      fs.writeFileSync(path.join(options.cwd, command.path), command.content);
      return { edited: command.path };
    case 'rewind':
      return { rewind: await manager!.rewindFiles(command.id) };
    case 'flush':
      await (storage as ReturnType<typeof mirroredStorage>).flush({ timeoutMs: command.timeoutMs ?? 10_000 });
      return { flushed: true };
    case 'close':
      // The session only: the store stays open for the next `open` (the process's exit ends its connections).
      await manager?.close();
      return { closed: true };
  }
}

for await (const line of readline.createInterface({ input: process.stdin })) {
  let answer: Record<string, unknown>;
  try {
    answer = await carryOut(JSON.parse(line) as SessionProcessCommand);
  } catch (error) {
    answer = { error: { code: (error as { code?: unknown }).code, message: (error as Error).message } };
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
// Stdin closed: the test is done with this writer, whatever it still holds (its connections go with it).
process.exit(0);
