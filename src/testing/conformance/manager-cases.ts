import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckpointManager } from '../../checkpoint-manager.js';
import type { ConformanceContext } from './context.js';

/** A real project directory under the system temp directory, removed after `body`. */
async function withProject(body: (root: string) => Promise<void>): Promise<void> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-conformance-')));
  try {
    await body(root);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function managerCases({ it, withStorage }: ConformanceContext): void {
  it('a CheckpointManager tracks and rewinds through the adapter, and a resumed manager rewinds further', () =>
    withStorage((storage) =>
      withProject(async (root) => {
        const file = (name: string) => path.join(root, name);
        const binary = Buffer.from([0, 255, 10, 13, 0, 128]);
        fs.writeFileSync(file('kept.txt'), 'version one\n');
        fs.writeFileSync(file('data.bin'), binary);
        const firstMessage = randomUUID();
        const secondMessage = randomUUID();

        const manager = await CheckpointManager.open({ cwd: root, storage });
        await manager.checkpoint(firstMessage);
        await manager.trackEdit('kept.txt');
        fs.writeFileSync(file('kept.txt'), 'version two\n');
        await manager.trackEdit('created.txt');
        fs.writeFileSync(file('created.txt'), 'made by the agent\n');
        await manager.trackEdit('data.bin');
        fs.rmSync(file('data.bin'));
        await manager.checkpoint(secondMessage);
        await manager.trackEdit('kept.txt');
        fs.writeFileSync(file('kept.txt'), 'version three\n');

        const rewound = await manager.rewindFiles(secondMessage);
        assert.equal(rewound.canRewind, true);
        assert.equal(fs.readFileSync(file('kept.txt'), 'utf8'), 'version two\n');
        await manager.close();

        const resumed = await CheckpointManager.open({ cwd: root, storage, resume: manager.sessionId });
        assert.deepEqual(
          (await resumed.listCheckpoints()).filter((checkpoint) => checkpoint.id === firstMessage || checkpoint.id === secondMessage).length,
          2,
        );
        const preview = await resumed.rewindFiles(firstMessage, { dryRun: true });
        assert.equal(preview.canRewind, true);
        await resumed.rewindFiles(firstMessage);
        assert.equal(fs.readFileSync(file('kept.txt'), 'utf8'), 'version one\n');
        assert.deepEqual(fs.readFileSync(file('data.bin')), binary);
        assert.equal(fs.existsSync(file('created.txt')), false);
        await resumed.close();
      }),
    ));

  it('a second manager cannot open a session another manager holds, when the adapter locks', () =>
    withStorage((storage) =>
      withProject(async (root) => {
        if (typeof storage.lock !== 'function') return;
        const manager = await CheckpointManager.open({ cwd: root, storage });
        await manager.checkpoint(randomUUID());
        try {
          await assert.rejects(CheckpointManager.open({ cwd: root, storage, resume: manager.sessionId }), { code: 'SESSION_LOCKED' });
        } finally {
          await manager.close();
        }
      }),
    ));
}
