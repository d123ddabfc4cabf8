import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, filesystemStorage, RewindableError } from '../../src/index.js';
import type { FileSet } from './helpers/crash-scenario.js';
import { errnoError, failingCalls, instrumentFs } from './helpers/fs-instrument.js';
import { createMemorySandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * Fault injection. The Nth filesystem call the library makes during an
 * operation fails with ENOSPC, EIO or EACCES — once, or for every call from
 * N on — for N = 1, 2, ... until the operation gets through without meeting
 * the fault. After each case, with the fault gone: the error was a typed
 * RewindableError, the session reopens, no file is mixed (a rewind left all
 * files before or all after), and no pre-image is lost (rewinding to the
 * first checkpoint restores the originals).
 */

const sessionId = '00000000-0000-4000-8000-0000000fa017';
const ids = {
  first: '00000000-0000-4000-8000-0000000000f1',
  second: '00000000-0000-4000-8000-0000000000f2',
  third: '00000000-0000-4000-8000-0000000000f3',
};
const large = (tag: string) => `${tag}\n${'large backup line\n'.repeat(700)}`; // over the loose-blob threshold below
const looseBlobMinBytes = 8192;

const originals: FileSet = {
  'a.txt': 'a original\n',
  'b.bin': '\u0000\u0001binary\u00ff',
  'c.txt': 'c original\n',
  'big.dat': large('big original'),
  'g.txt': 'g original\n',
  'h.dat': large('h original'),
};
/** The state the golden session leaves: two turns of edits, then changes made outside the tools. */
const afterSession: FileSet = {
  'a.txt': 'a changed outside\n',
  'b.bin': '\u0000\u0001binary changed\u00ff',
  'big.dat': large('big changed outside'),
  'd.txt': 'd created\n',
  'g.txt': 'g original\n',
  'h.dat': large('h original'),
  'sub/e.txt': 'e created\n',
};

type Operation = 'trackEdit (pack)' | 'trackEdit (loose blob)' | 'checkpoint' | 'rewind';
const codes = ['ENOSPC', 'EIO', 'EACCES'] as const;

let sandbox: Sandbox;
let golden: string;

/** Opens the session with its own storage handle; `close` closes both (a caller-owned storage stays open otherwise). */
async function openSession(durability: 'full' | 'none'): Promise<{ manager: CheckpointManager; close(): Promise<void> }> {
  const storage = filesystemStorage({ directory: sandbox.store, durability, looseBlobMinBytes });
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storage, durability, resume: sessionId });
  return {
    manager,
    async close() {
      try {
        await manager.close();
      } finally {
        await storage.close();
      }
    },
  };
}

beforeAll(async () => {
  sandbox = createMemorySandbox();
  golden = `${sandbox.base}.golden`;
  sandbox.writeFiles(originals);
  const storage = filesystemStorage({ directory: sandbox.store, durability: 'full', looseBlobMinBytes });
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storage, sessionId });
  await manager.checkpoint(ids.first);
  for (const file of ['a.txt', 'b.bin', 'd.txt', 'big.dat']) await manager.trackEdit(file);
  sandbox.writeFiles({ 'a.txt': 'a by the agent\n', 'b.bin': afterSession['b.bin']!, 'd.txt': afterSession['d.txt']!, 'big.dat': large('big by the agent') });
  await manager.checkpoint(ids.second);
  await manager.trackEdit('c.txt');
  await manager.trackEdit('sub/e.txt');
  fs.rmSync(path.join(sandbox.root, 'c.txt'));
  sandbox.writeFiles({ 'sub/e.txt': afterSession['sub/e.txt']! });
  await manager.close();
  await storage.close();
  // Changed by the user after the session: the next checkpoint has new backups to store.
  sandbox.writeFiles({ 'a.txt': afterSession['a.txt']!, 'big.dat': afterSession['big.dat']! });
  expect(sandbox.files()).toEqual(afterSession);
  fs.cpSync(sandbox.base, golden, { recursive: true });
});

afterAll(() => {
  sandbox.dispose();
  fs.rmSync(golden, { recursive: true, force: true });
});

/** Files as short labels (which known version each is), so a failure message stays readable. */
function labelled(files: FileSet): Record<string, string> {
  const known: Array<[string, FileSet]> = [
    ['original', originals],
    ['after session', afterSession],
  ];
  return Object.fromEntries(
    Object.entries(files).map(([name, content]) => {
      const match = known.find(([, set]) => set[name] === content);
      return [name, match?.[0] ?? `other: ${JSON.stringify(content.slice(0, 24))} (${content.length} bytes)`];
    }),
  );
}

function restoreGolden(): void {
  fs.rmSync(sandbox.base, { recursive: true, force: true });
  fs.cpSync(golden, sandbox.base, { recursive: true });
}

/** What each open file descriptor refers to, so a failed fd call can be attributed. */
const openFiles = new Map<number, string>();
/** Errors that surfaced without a RewindableError code: allowed only where the typed wrapping is not ours to add (see the report). */
const untyped: Array<{ operation: Operation; call: string; target: string; error: string }> = [];

function resolveEntry(entry: string): string {
  const match = /^\/proc\/self\/fd\/(\d+)(\/.*)?$/.exec(entry);
  if (match === null) return entry;
  return `${openFiles.get(Number(match[1])) ?? '?'}${match[2] ?? ''}`;
}

/** `project`, `store` or `other`: what the failed call was working on. */
function targetOf(name: string, args: readonly unknown[]): string {
  const first = args[0];
  const where = typeof first === 'number' ? (openFiles.get(first) ?? '?') : resolveEntry(String(first));
  if (where.startsWith(`${sandbox.root}/`) || where === sandbox.root) return `project (${path.relative(sandbox.root, where) || '.'})`;
  if (where.startsWith(`${sandbox.store}/`)) return `store (${path.relative(sandbox.store, where)})`;
  return `other (${where})`;
}

async function perform(operation: Operation, manager: CheckpointManager): Promise<unknown> {
  switch (operation) {
    case 'trackEdit (pack)':
      return manager.trackEdit('g.txt');
    case 'trackEdit (loose blob)':
      return manager.trackEdit('h.dat');
    case 'checkpoint':
      return manager.checkpoint(ids.third);
    case 'rewind':
      return manager.rewindFiles(ids.first);
  }
}

interface CaseOutcome {
  /** The operation got through without meeting the fault: the loop is done. */
  completed: boolean;
  errorCode?: string;
}

/**
 * One case: fault at call `failAt` (and every later call when `persistent`),
 * then every check with the fault gone.
 */
async function runCase(operation: Operation, failAt: number, persistent: boolean, code: (typeof codes)[number]): Promise<CaseOutcome> {
  restoreGolden();
  const context = `${operation}, ${code} at call ${failAt}${persistent ? ' and after' : ' once'}`;
  const session = await openSession('full');
  let calls = 0;
  let injected: { call: string; target: string } | undefined;
  const restoreFs = instrumentFs(
    failingCalls,
    (name, args) => {
      calls += 1;
      if (calls === failAt || (persistent && calls > failAt)) {
        injected ??= { call: name, target: targetOf(name, args) };
        return errnoError(code, name);
      }
      return undefined;
    },
    (name, args, result) => {
      if (name === 'openSync' && typeof result === 'number') openFiles.set(result, resolveEntry(String(args[0])));
    },
  );
  let failure: unknown;
  try {
    await perform(operation, session.manager);
  } catch (error) {
    failure = error;
  } finally {
    restoreFs();
  }
  if (injected === undefined) {
    expect(failure, context).toBeUndefined();
    await session.close();
    return { completed: true };
  }

  if (failure !== undefined && !RewindableError.isInstance(failure)) {
    untyped.push({ operation, call: injected.call, target: injected.target, error: String(failure) });
  }
  // The agent acts on the outcome: it writes only after a backup that succeeded.
  if (failure === undefined && operation.startsWith('trackEdit')) sandbox.writeFiles({ [operation.includes('loose') ? 'h.dat' : 'g.txt']: 'written by the agent\n' });
  const beforeClose = labelled(sandbox.files());
  await session.close().catch(() => {}); // a failed flush may have poisoned the store handle; reopening is the way back

  // Checking needs no flushing.
  const reopened = await openSession('none');
  const { manager } = reopened;
  try {
    const files = labelled(sandbox.files());
    if (operation === 'rewind') {
      // All files before the rewind, or all after it: never a mix.
      const [before, after] = [labelled(afterSession), labelled(originals)];
      expect([before, after], `${context}: files after reopening ${JSON.stringify(files)} (error: ${String(failure)})`).toContainEqual(files);
      if (failure === undefined) expect(files, `${context}: a rewind that succeeded restored every file`).toEqual(after);
      // A failed rewind is rolled back, unless the error itself says the rollback failed too.
      else if (!/rolling it back failed too/.test(String(failure))) expect(files, `${context}: a failed rewind is rolled back (${String(failure)})`).toEqual(before);
    } else {
      expect(files, context).toEqual(beforeClose);
    }
    if (operation === 'checkpoint' && failure === undefined) {
      sandbox.writeFiles({ 'a.txt': 'after the checkpoint\n' });
      await manager.rewindFiles(ids.third);
      expect(labelled(sandbox.files()), `${context}: rewind to the new checkpoint`).toEqual(files);
    }
    const checkpoints = (await manager.listCheckpoints()).map((checkpoint) => checkpoint.id);
    expect(checkpoints.slice(0, 2), context).toEqual([ids.first, ids.second]);

    // No pre-image lost (g.txt and h.dat were only written after a backup that succeeded).
    const current = sandbox.files();
    const toFirst = await manager.rewindFiles(ids.first);
    expect(labelled(sandbox.files()), `${context}: rewind to the first checkpoint`).toEqual(labelled(originals));
    await manager.rewindFiles(toFirst.undoCheckpointId!);
    expect(labelled(sandbox.files()), `${context}: undo`).toEqual(labelled(current));
  } finally {
    await reopened.close();
  }
  return { completed: false, errorCode: failure === undefined ? 'no error (fault absorbed)' : ((failure as RewindableError).code ?? 'untyped') };
}

describe('fault injection: the Nth filesystem call fails', () => {
  const operations: Operation[] = ['trackEdit (pack)', 'trackEdit (loose blob)', 'checkpoint', 'rewind'];
  for (const operation of operations) {
    for (const persistent of [false, true]) {
      // Persistent faults: every other starting call, which still reaches every phase of the operation.
      const stride = persistent ? 2 : 1;
      it(`${operation}: ${persistent ? 'persistent faults from every other call on' : 'a one-off fault at every call'}`, async () => {
        const seen: Record<string, number> = {};
        let cases = 0;
        for (let failAt = 1; ; failAt += stride) {
          const code = codes[failAt % codes.length]!;
          const outcome = await runCase(operation, failAt, persistent, code);
          if (outcome.completed) break;
          cases += 1;
          seen[outcome.errorCode!] = (seen[outcome.errorCode!] ?? 0) + 1;
        }
        expect(cases).toBeGreaterThan(5);
        // Every fault surfaces as a RewindableError: FILE_IO for project files, STORE_IO for the store.
        expect(untyped, 'untyped errors').toEqual([]);
        console.info(`${operation}, ${persistent ? 'persistent' : 'one-off'}: ${cases} fault cases`, seen);
        untyped.length = 0;
      }, 120_000);
    }
  }
});
