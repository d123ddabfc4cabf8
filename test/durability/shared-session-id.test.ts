import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointManager } from '../../src/index.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';
import { startTalkingChild } from './helpers/talking-child.js';

/**
 * A session id is unique only within its project: a harness that reuses its
 * conversation id in two workspace folders runs two live writers of the same
 * id, each holding its own project's lock. Everything named by a session is
 * named by its project too, so neither writer touches the other's backups.
 */

const sandboxes: Sandbox[] = [];
afterEach(() => {
  while (sandboxes.length > 0) sandboxes.pop()!.dispose();
});

const fileCount = 80;

function writeProject(root: string): Record<string, Buffer> {
  const originals: Record<string, Buffer> = {};
  for (let index = 0; index < fileCount; index += 1) {
    const file = `src/file-${index}.txt`;
    originals[file] = Buffer.concat([Buffer.from(`${root} ${file}\n`), randomBytes(64 + index)]);
    fs.mkdirSync(path.join(root, 'src'), { recursive: true });
    fs.writeFileSync(path.join(root, file), originals[file]);
  }
  return originals;
}

describe('two projects, one session id', () => {
  it('two processes writing sessions of the same id in two projects at the same time keep every backup: each rewinds every file exactly', async () => {
    const sandbox = createSandbox();
    sandboxes.push(sandbox);
    const roots = [sandbox.root, path.join(sandbox.base, 'second-project')];
    fs.mkdirSync(roots[1]!);
    const originals = roots.map(writeProject);
    const sessionId = randomUUID();
    const files = Object.keys(originals[0]!);

    const writers = await Promise.all(roots.map((root) => startTalkingChild('same-session-writer', { root, store: sandbox.store, sessionId, files })));
    const checkpoints = [];
    for (const writer of writers) checkpoints.push((await writer.next()).checkpoint as string);
    for (const writer of writers) writer.send('go');
    for (const writer of writers) expect(await writer.next()).toEqual({ done: true });

    for (const [index, root] of roots.entries()) {
      const manager = await CheckpointManager.open({ cwd: root, storeDir: sandbox.store, resume: sessionId, durability: 'none' });
      const result = await manager.rewindFiles(checkpoints[index]!);
      await manager.close();
      expect(result.skipped ?? [], root).toEqual([]);
      for (const file of files) expect(fs.readFileSync(path.join(root, file)).equals(originals[index]![file]!), `${root} ${file}`).toBe(true);
    }
  });
});
