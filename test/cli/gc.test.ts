import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { newId } from '../helpers/temp-project.js';
import { buildCli, runCli, type BuiltCli } from './helpers/built-cli.js';
import { holdSession } from './helpers/locked-session.js';
import { scriptedSession, type ScriptedSession } from './helpers/scripted-session.js';

let cli: BuiltCli;

beforeAll(async () => {
  cli = await buildCli();
});
afterAll(() => cli.remove());

const day = 24 * 60 * 60 * 1000;

/** Makes a session look idle since `days` ago: its log and pack were last written then. */
function age(session: ScriptedSession, days: number): void {
  const when = new Date(Date.now() - days * day);
  const files = fs.readdirSync(session.project.store, { recursive: true, encoding: 'utf8' }).filter((file) => file.includes(session.sessionId));
  for (const file of files) fs.utimesSync(path.join(session.project.store, file), when, when);
}

/** A second session of the same project, sharing the store, active now. */
async function activeSession(session: ScriptedSession): Promise<string> {
  const manager = await session.project.open();
  await manager.checkpoint(newId());
  await manager.trackEdit('fresh.txt');
  session.project.write('fresh.txt', 'new\n');
  await manager.close();
  return manager.sessionId;
}

const listed = async (session: ScriptedSession) =>
  sessionsOutputSchema.parse(JSON.parse((await runCli(cli, ['sessions', '--cwd', session.project.root, '--store', session.project.store, '--json'])).stdout)).sessions.map((entry) => entry.sessionId);

describe('rewindable gc', () => {
  it('removes sessions idle past --older-than and reports the space freed', async () => {
    const old = await scriptedSession();
    age(old, 40);
    const fresh = await activeSession(old);

    const run = await runCli(cli, ['gc', '--store', old.project.store]);

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Removed 1 session idle for over 30 days and 0 shared backups no session needed: \d+(\.\d)? (B|KiB) freed\.\nKept 1 session\.\n$/);
    expect(await listed(old)).toEqual([fresh]);
  });

  it('--older-than takes hours and weeks; --json prints the documented shape', async () => {
    const old = await scriptedSession();
    age(old, 3);
    const fresh = await activeSession(old);

    const keep = await runCli(cli, ['gc', '--older-than', '1w', '--store', old.project.store, '--json']);
    const remove = await runCli(cli, ['gc', '--older-than', '36h', '--json'], { env: { REWINDABLE_HOME: old.project.store } });

    expect(gcOutputSchema.parse(JSON.parse(keep.stdout))).toMatchObject({ olderThanDays: 7, sessionsRemoved: [], sessionsKept: 2, bytesFreed: 0 });
    const removed = gcOutputSchema.parse(JSON.parse(remove.stdout));
    expect(removed).toMatchObject({ store: old.project.store, olderThanDays: 1.5, sessionsRemoved: [{ sessionId: old.sessionId }], sessionsKept: 1 });
    expect(removed.bytesFreed).toBeGreaterThan(0);
    expect(await listed(old)).toEqual([fresh]);
  });

  it('keeps an idle session another process has open, and says so', async () => {
    const old = await scriptedSession();
    const holder = await holdSession({ cwd: old.project.root, storeDir: old.project.store, sessionId: old.sessionId });
    try {
      age(old, 40);
      const run = await runCli(cli, ['gc', '--store', old.project.store]);

      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Kept 1 session (1 idle session kept because a process has it open).');
      expect(await listed(old)).toEqual([old.sessionId]);
    } finally {
      await holder.release();
    }
  });

  it('--progress reports on stderr only', async () => {
    const old = await scriptedSession();

    const run = await runCli(cli, ['gc', '--store', old.project.store, '--json', '--progress']);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/Checking sessions: project 1\/1\n(.*\n)*Removing backups no session needs: done\n$/);
    expect(gcOutputSchema.parse(JSON.parse(run.stdout)).sessionsKept).toBe(1);
  });
});
