import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeProjectKey, filesystemStorage } from '../../src/index.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';
import { bundledWorker } from './helpers/bundle.js';

/**
 * The note of a rewind in progress (`<project key>.rewinding/<session id>`) is
 * named by the session, whoever holds it. A holder whose lock was broken must
 * write none and take none away: it would take away the new holder's, and a
 * crash of that holder's rewind would then never be rolled back.
 */

const original = { 'a.txt': 'a.txt: original\n', 'b.txt': 'b.txt: original\n', 'c.txt': 'c.txt: original\n' };
const agent = { 'a.txt': 'a.txt: agent\n', 'b.txt': 'b.txt: agent\n', 'c.txt': 'c.txt: agent\n' };

function files(project: TempProject): Record<string, string> {
  return Object.fromEntries(Object.keys(original).map((name) => [name, project.read(name).toString()]));
}

/** Resumes the session in a child process and rewinds it to `first`, killed just before its second file is put in place. */
async function rewindKilledMidway(project: TempProject, sessionId: string, first: string): Promise<void> {
  const config = { root: project.root, store: project.store, sessionId, first, stop: 'kill', resume: true };
  const child = spawn(process.execPath, [await bundledWorker('interrupted-rewind'), JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, received) => resolve(received)));
  expect(signal, output).toBe('SIGKILL');
}

describe('a holder whose lock was broken, while the new holder rewinds', () => {
  it('writes no note of a rewind and takes none away: the new holder’s rewind, killed midway, is rolled back by the next session of the project', async () => {
    const project = tempProject();
    for (const [name, content] of Object.entries(original)) project.write(name, content);
    const holder = await project.open({ sessionId: newId() });
    const first = await holder.checkpoint();
    for (const name of Object.keys(original)) await holder.tools.write({ file_path: name, content: agent[name as keyof typeof agent] });
    await holder.checkpoint();
    const key = { projectKey: encodeProjectKey(project.root), sessionId: holder.sessionId };
    const storage = filesystemStorage({ directory: project.store, durability: 'none' });
    await storage.breakLock(key); // rewindable unlock --force

    await rewindKilledMidway(project, holder.sessionId, first);
    expect(files(project)).toEqual({ ...agent, 'a.txt': original['a.txt'] });
    const note = path.join(project.store, 'projects', `${key.projectKey}.rewinding`, `${key.sessionId}.jsonl`);
    const noteBytes = fs.readFileSync(note);
    const logBytes = fs.readFileSync(storage.logPath(key));

    await expect(holder.rewindFiles(first)).rejects.toMatchObject({ code: 'SESSION_LOCKED', details: { reason: 'lock-lost' } });
    expect(fs.existsSync(note), 'the new holder’s note is still there').toBe(true);
    expect(fs.readFileSync(note)).toEqual(noteBytes);
    expect(fs.readFileSync(storage.logPath(key))).toEqual(logBytes);
    expect(files(project)).toEqual({ ...agent, 'a.txt': original['a.txt'] });

    const next = await project.open({ sessionId: newId() });
    expect(await next.interruptedRewinds()).toEqual([expect.objectContaining({ sessionId: holder.sessionId, target: first, outcome: 'rolled-back' })]);
    expect(files(project)).toEqual(agent);
    expect(fs.existsSync(note)).toBe(false);
    await storage.close();
  });
});
