import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlockOutputSchema } from '../../src/cli/output-schemas.js';
import { encodeProjectKey } from '../../src/index.js';
import { startTalkingChild } from '../durability/helpers/talking-child.js';
import { buildCli, runCli, type BuiltCli } from './helpers/built-cli.js';
import { scriptedSession, type ScriptedSession } from './helpers/scripted-session.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const lockPathOf = (session: ScriptedSession) => path.join(session.project.store, 'projects', encodeProjectKey(session.project.root), `${session.sessionId}.lock`);

/** The session, held open for writing by another live process that tracks a file whenever asked. */
async function heldSession(session: ScriptedSession) {
  const holder = await startTalkingChild('lease-holder', { root: session.project.root, store: session.project.store, sessionId: session.sessionId });
  expect(await holder.next()).toMatchObject({ holding: true });
  return holder;
}

describe('rewindable unlock', () => {
  it('shows a live holder and changes nothing without --force (exit 1); --force breaks the lock (exit 0), and the holder’s next write fails with SESSION_LOCKED', async () => {
    const session = await scriptedSession();
    const holder = await heldSession(session);
    const store = ['--store', session.project.store];

    const shown = await runCli(cli, ['unlock', session.sessionId, ...store]);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain(`Locked: session ${session.sessionId}, held by process ${holder.child.pid} on `);
    expect(shown.stderr).toContain('Nothing was changed: the holder looks alive. Pass --force to remove the lock anyway, only if it is gone for good: two writers on one session lose backups.');
    expect(fs.existsSync(lockPathOf(session))).toBe(true);

    const forced = await runCli(cli, ['unlock', session.sessionId, '--force', ...store]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain(`Removed the lock of session ${session.sessionId}, held by process ${holder.child.pid} on `);
    expect(fs.existsSync(lockPathOf(session))).toBe(false);
    const rewound = await runCli(cli, ['rewind', session.sessionId, session.first, '--yes', ...store]);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(session.project.snapshot()).toEqual(session.atFirst);

    holder.send('src/not-tracked-yet.ts');
    expect(await holder.next()).toMatchObject({ error: { code: 'SESSION_LOCKED' } });
  });

  it('removes a lock whose holder is gone without --force, and says a session without a lock is not locked', async () => {
    const session = await scriptedSession();
    fs.writeFileSync(lockPathOf(session), JSON.stringify({ pid: 2 ** 22 + 7, hostname: (await import('node:os')).hostname(), processStart: '1', token: 'left-by-a-crash', acquiredAt: new Date().toISOString() }));

    const removed = await runCli(cli, ['unlock', session.sessionId, '--store', session.project.store]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/^Removed the lock of session .*; the holder is gone\.\n$/);
    expect(fs.existsSync(lockPathOf(session))).toBe(false);

    const again = await runCli(cli, ['unlock', session.sessionId, '--store', session.project.store]);
    expect(again).toMatchObject({ code: 0, stdout: `Session ${session.sessionId} is not locked.\n` });
  });

  it('removes a lock stating a lease out of range without --force: it names no holder, and says so', async () => {
    const session = await scriptedSession();
    fs.writeFileSync(lockPathOf(session), JSON.stringify({ pid: 4242, hostname: 'elsewhere', processStart: null, token: 't', acquiredAt: 'garbage', leaseMs: 1e300 }));

    const removed = await runCli(cli, ['unlock', session.sessionId, '--store', session.project.store]);

    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(new RegExp(`^Removed the lock of session ${session.sessionId}, a lock file that names no process \\(last renewed .*\\)\\.\n$`));
    expect(fs.existsSync(lockPathOf(session))).toBe(false);
  });

  it('--force removes a lock that is a symbolic link, never what it leads to', async () => {
    const session = await scriptedSession();
    const target = path.join(session.project.outside, 'elsewhere');
    fs.writeFileSync(target, 'not the store’s');
    fs.symlinkSync(target, lockPathOf(session));

    const forced = await runCli(cli, ['unlock', session.sessionId, '--force', '--store', session.project.store]);

    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`Removed the lock of session ${session.sessionId}, a lock file that names no process`);
    expect(fs.lstatSync(lockPathOf(session), { throwIfNoEntry: false })).toBeUndefined();
    expect(fs.readFileSync(target, 'utf8')).toBe('not the store’s');
  });

  it('--json prints the documented shape', async () => {
    const session = await scriptedSession();
    const holder = await heldSession(session);

    const run = await runCli(cli, ['unlock', session.sessionId, '--force', '--json', '--store', session.project.store]);

    expect(run.code).toBe(0);
    const output = unlockOutputSchema.parse(JSON.parse(run.stdout));
    expect(output).toMatchObject({ sessionId: session.sessionId, projectKey: encodeProjectKey(session.project.root), removed: true, lock: { pid: holder.child.pid, live: true } });
  });
});
