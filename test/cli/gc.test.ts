import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcOutputSchema, sessionsOutputSchema } from '../../src/cli/output-schemas.js';
import { newId, tempProject } from '../helpers/temp-project.js';
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

    const run = await runCli(cli, ['gc', '--yes', '--store', old.project.store]);

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/^Removed 1 session idle for over 30 days and 0 shared backups no session needed: \d+(\.\d)? (B|KiB) freed\.\nKept 1 session\.\n$/);
    expect(await listed(old)).toEqual([fresh]);
  });

  it('--older-than takes hours and weeks; --json prints the documented shape', async () => {
    const old = await scriptedSession();
    age(old, 3);
    const fresh = await activeSession(old);

    const keep = await runCli(cli, ['gc', '--yes', '--older-than', '1w', '--store', old.project.store, '--json']);
    const remove = await runCli(cli, ['gc', '--yes', '--older-than', '36h', '--json'], { env: { REWINDABLE_HOME: old.project.store } });

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
      const run = await runCli(cli, ['gc', '--yes', '--store', old.project.store]);

      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Kept 1 session (1 idle session kept because a process has it open).');
      expect(await listed(old)).toEqual([old.sessionId]);
    } finally {
      await holder.release();
    }
  });

  it('--progress reports on stderr only', async () => {
    const old = await scriptedSession();

    const run = await runCli(cli, ['gc', '--yes', '--store', old.project.store, '--json', '--progress']);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/Checking sessions: project 1\/1\n(.*\n)*Removing backups no session needs: done\n$/);
    expect(gcOutputSchema.parse(JSON.parse(run.stdout)).sessionsKept).toBe(1);
  });
});

describe('rewindable gc removes only rewindable sessions of its own store', () => {
  /** A file laid out like another tool's session transcript (Claude Code's `projects/<key>/<uuid>.jsonl`), last written 60 days ago. */
  function foreignTranscript(folder: string): string {
    fs.mkdirSync(folder, { recursive: true });
    const file = path.join(folder, `${randomUUID()}.jsonl`);
    fs.writeFileSync(file, '{"type":"user","message":{"role":"user","content":"a transcript of another tool"}}\n');
    fs.utimesSync(file, new Date(Date.now() - 60 * day), new Date(Date.now() - 60 * day));
    return file;
  }

  it('never deletes a file outside the store through a link in projects/, and says that no backup was removed because of the link', async () => {
    const project = tempProject();
    const transcript = foreignTranscript(path.join(project.outside, 'transcripts'));
    const before = fs.readFileSync(transcript);
    fs.mkdirSync(path.join(project.store, 'projects'), { recursive: true });
    fs.symlinkSync(path.dirname(transcript), path.join(project.store, 'projects', '-home-me-proj'));

    const json = await runCli(cli, ['gc', '--yes', '--store', project.store, '--json']);
    const text = await runCli(cli, ['gc', '--yes', '--store', project.store]);

    expect(json.code).toBe(0);
    const output = gcOutputSchema.parse(JSON.parse(json.stdout));
    expect(output).toMatchObject({ sessionsRemoved: [], sessionsKept: 0, blobsRemoved: 0 });
    expect(output.blobsKeptBecause).toContain(`projects${path.sep}-home-me-proj in the store is a symbolic link`);
    expect(text.stdout).toContain('No backup was removed: projects/-home-me-proj in the store is a symbolic link, which the store never follows');
    expect(fs.readdirSync(path.dirname(transcript))).toEqual([path.basename(transcript)]);
    expect(fs.readFileSync(transcript).equals(before)).toBe(true);
  });

  it('leaves alone an idle file named like a session that is not a rewindable session log (a store pointed at another tool’s folder), and lists it', async () => {
    const project = tempProject();
    const transcript = foreignTranscript(path.join(project.store, 'projects', '-home-me-proj'));
    const before = fs.readFileSync(transcript);
    const sessionId = path.basename(transcript, '.jsonl');

    const json = await runCli(cli, ['gc', '--yes', '--store', project.store, '--json']);
    const text = await runCli(cli, ['gc', '--yes', '--store', project.store]);

    expect(json.code).toBe(0);
    expect(gcOutputSchema.parse(JSON.parse(json.stdout))).toMatchObject({
      sessionsRemoved: [],
      sessionsKept: 0,
      leftAlone: [{ projectKey: '-home-me-proj', sessionId, reason: 'it is not a rewindable session log (it does not start with a session-start record)' }],
    });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(
      `Left alone 1 file that is not a rewindable session:\n  projects/-home-me-proj/${sessionId}.jsonl: it is not a rewindable session log (it does not start with a session-start record)\n`,
    );
    expect(fs.readFileSync(transcript).equals(before)).toBe(true);
  });

  it('leaves alone an idle session whose log is damaged, and removes no backup while it cannot be read', async () => {
    const old = await scriptedSession();
    age(old, 40);
    const log = path.join(old.project.store, 'projects', fs.readdirSync(path.join(old.project.store, 'projects'))[0]!, `${old.sessionId}.jsonl`);
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    lines[1] = lines[1]!.replace('"type"', '"tipe"'); // the second line no longer matches its checksum
    fs.writeFileSync(log, lines.join('\n'));
    age(old, 40);
    const damaged = fs.readFileSync(log);

    const output = gcOutputSchema.parse(JSON.parse((await runCli(cli, ['gc', '--yes', '--store', old.project.store, '--json'])).stdout));

    expect(output.sessionsRemoved).toEqual([]);
    expect(output.leftAlone).toEqual([expect.objectContaining({ sessionId: old.sessionId, reason: expect.stringContaining('its log cannot be read: The session log') })]);
    expect(output.blobsKeptBecause).toBe(`the logs of 1 session(s) could not be read (${old.sessionId})`);
    expect(fs.readFileSync(log).equals(damaged)).toBe(true);
  });
});
