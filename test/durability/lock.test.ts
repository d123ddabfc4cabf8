import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager } from '../../src/index.js';
import { bundledWorker } from './helpers/bundle.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * One writer per session. Processes that open the same session at the same
 * moment: exactly one gets it, the others get SESSION_LOCKED. A holder killed
 * with SIGKILL leaves its lock behind, and the next opener reclaims it.
 */

interface Contender {
  child: ChildProcessByStdio<Writable, Readable, null>;
  lines: Array<Record<string, unknown>>;
  next(): Promise<Record<string, unknown>>;
  exited: Promise<NodeJS.Signals | null>;
}

const sandboxes: Sandbox[] = [];
const children: Contender[] = [];
afterEach(() => {
  for (const contender of children.splice(0)) contender.child.kill('SIGKILL');
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

async function startContender(sandbox: Sandbox, sessionId: string): Promise<Contender> {
  const child = spawn(process.execPath, [await bundledWorker('lock-contender'), JSON.stringify({ root: sandbox.root, store: sandbox.store, sessionId })], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiting: Array<(line: Record<string, unknown>) => void> = [];
  let buffered = '';
  let read = 0;
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
      lines.push(JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>);
      buffered = buffered.slice(newline + 1);
      while (waiting.length > 0 && read < lines.length) waiting.shift()!(lines[read++]!);
    }
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  const contender: Contender = {
    child,
    lines,
    exited,
    next: () => (read < lines.length ? Promise.resolve(lines[read++]!) : new Promise((resolve) => waiting.push(resolve))),
  };
  children.push(contender);
  return contender;
}

async function newSession(): Promise<{ sandbox: Sandbox; sessionId: string }> {
  const sandbox = createSandbox();
  sandboxes.push(sandbox);
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
  await manager.checkpoint();
  await manager.close();
  return { sandbox, sessionId: manager.sessionId };
}

describe('one writer per session', () => {
  it('of processes opening the same session at the same moment, exactly one gets it; the others get SESSION_LOCKED', async () => {
    const { sandbox, sessionId } = await newSession();
    for (let round = 0; round < 4; round += 1) {
      const contenders = await Promise.all([0, 1, 2].map(() => startContender(sandbox, sessionId)));
      for (const contender of contenders) expect(await contender.next()).toEqual({ ready: true });
      for (const contender of contenders) contender.child.stdin.write('go\n');
      const results = await Promise.all(contenders.map((contender) => contender.next()));

      const winners = results.filter((result) => result.opened === true);
      expect(winners, `round ${round}: ${JSON.stringify(results)}`).toHaveLength(1);
      for (const loser of results.filter((result) => result.opened !== true)) expect(loser.code, loser.message as string).toBe('SESSION_LOCKED');
      // The winner releases the session; the next round's contenders find it free.
      for (const contender of contenders) contender.child.stdin.end();
      await Promise.all(contenders.map((contender) => contender.exited));
    }
    const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId });
    expect(await manager.listCheckpoints()).toHaveLength(1 + 4); // one checkpoint per round, by its winner alone
    await manager.close();
  });

  it('a holder killed with SIGKILL leaves a lock the next opener reclaims', async () => {
    const { sandbox, sessionId } = await newSession();
    const holder = await startContender(sandbox, sessionId);
    await holder.next();
    holder.child.stdin.write('go\n');
    const held = await holder.next();
    expect(held.opened).toBe(true);
    await expect(CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId })).rejects.toMatchObject({ code: 'SESSION_LOCKED' });

    holder.child.kill('SIGKILL');
    expect(await holder.exited).toBe('SIGKILL');

    const next = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, resume: sessionId });
    expect((await next.listCheckpoints()).map((checkpoint) => checkpoint.id)).toContain(held.checkpoint);
    await next.checkpoint();
    await next.close();
  });
});
