import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeProjectKey, type CheckpointManager } from '../../src/index.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

/**
 * Damage in the filesystem store is reported per path (`backup-unreadable`),
 * never dropped silently and never restored with wrong bytes.
 */

function looseBlobs(project: TempProject): string[] {
  const blobs = path.join(project.store, 'blobs');
  return fs
    .readdirSync(blobs)
    .filter((folder) => folder !== 'packs')
    .flatMap((folder) => fs.readdirSync(path.join(blobs, folder)).map((name) => path.join(blobs, folder, name)));
}

async function unreadablePaths(manager: CheckpointManager, checkpointId: string, dryRun: boolean): Promise<string[]> {
  const outcome = await manager.rewindFiles(checkpointId, { dryRun });
  return (outcome.skipped ?? []).filter((skip) => skip.reason === 'backup-unreadable').map((skip) => skip.path);
}

describe('a missing loose backup named by the last record', () => {
  it('is reported as backup-unreadable by a dry run and a rewind, and the path stays tracked', async () => {
    const project = tempProject();
    const original = Buffer.alloc(2 * 1024 * 1024, 'o'); // large enough to be a loose blob
    project.write('big.bin', original);
    const manager = await project.open({ durability: 'full' });
    const turn = await manager.checkpoint(newId());
    await manager.trackEdit('big.bin'); // the log's last record: its loose blob was flushed before its line
    project.write('big.bin', 'agent\n');
    await manager.close();
    const [blob] = looseBlobs(project);
    const saved = fs.readFileSync(blob!);
    fs.rmSync(blob!);

    const damaged = await project.open({ resume: manager.sessionId });
    expect(await unreadablePaths(damaged, turn, true)).toEqual([project.file('big.bin')]);
    expect(await unreadablePaths(damaged, turn, false)).toEqual([project.file('big.bin')]);
    expect(project.read('big.bin').toString()).toBe('agent\n');
    await damaged.close();

    // Opening the session writably did not untrack the path: once the blob is back, the rewind restores it.
    fs.writeFileSync(blob!, saved);
    const repaired = await project.open({ resume: manager.sessionId });
    expect(await unreadablePaths(repaired, turn, false)).toEqual([]);
    expect(project.read('big.bin').equals(original)).toBe(true);
  });
});

describe('a flipped byte in a pack', () => {
  /**
   * Four turns, each editing one line of a 4 KiB file. The pack holds one full
   * copy, then each version as a delta against the one before: the version a
   * turn restores was stored by the tool write of the turn before (a write
   * keeps its bytes), the first by the first turn's backup.
   */
  async function versionedFile(project: TempProject) {
    let content = Array.from({ length: 200 }, (_, line) => `line ${line} of the file\n`).join('');
    project.write('f.txt', content);
    const manager = await project.open();
    const packPath = path.join(project.store, 'blobs', 'packs', encodeProjectKey(project.root), `${manager.sessionId}.pack`);
    const packSize = () => (fs.existsSync(packPath) ? fs.statSync(packPath).size : 0);
    const turns: Array<{ id: string; content: string; entryStart: number }> = [];
    let entryStart = 0;
    for (let turn = 1; turn <= 4; turn += 1) {
      turns.push({ id: await manager.checkpoint(newId()), content, entryStart });
      await manager.trackEdit('f.txt'); // the first turn backs up the first version; later turns find theirs stored
      entryStart = packSize();
      content = content.replace(`line ${100 + turn} `, `LINE ${100 + turn} edited `);
      await manager.tools.write({ file_path: 'f.txt', content });
    }
    await manager.close();
    return { sessionId: manager.sessionId, packPath, turns, latest: { content, entryStart } };
  }

  function flipByte(file: string, position: number): void {
    const bytes = fs.readFileSync(file);
    bytes[position]! ^= 0x01;
    fs.writeFileSync(file, bytes);
  }

  it('in the full copy: it and every later version stored as a delta of it are reported, none restored wrong', async () => {
    const project = tempProject();
    const { sessionId, packPath, turns, latest } = await versionedFile(project);
    flipByte(packPath, turns[0]!.entryStart + 72 + 10); // byte 10 of the first version's content

    const manager = await project.open({ resume: sessionId });
    for (const turn of turns) {
      expect(await unreadablePaths(manager, turn.id, true)).toEqual([project.file('f.txt')]);
      expect(await unreadablePaths(manager, turn.id, false)).toEqual([project.file('f.txt')]);
      expect(project.read('f.txt').toString()).toBe(latest.content);
    }
  });

  it('in a later delta: only that version and the ones after it are lost; earlier ones restore exactly', async () => {
    const project = tempProject();
    const { sessionId, packPath, turns } = await versionedFile(project);
    flipByte(packPath, turns[2]!.entryStart + 72 + 40); // inside the third version's delta payload

    const manager = await project.open({ resume: sessionId });
    for (const [index, turn] of turns.entries()) {
      const lost = index >= 2;
      expect(await unreadablePaths(manager, turn.id, false), `turn ${index + 1}`).toEqual(lost ? [project.file('f.txt')] : []);
      if (!lost) expect(project.read('f.txt').toString(), `turn ${index + 1}`).toBe(turn.content);
    }
  });

  it('a version backed up after the damage is not built on the damaged one, and restores exactly', async () => {
    const project = tempProject();
    const { sessionId, packPath, latest } = await versionedFile(project);
    flipByte(packPath, latest.entryStart + 72 + 40); // the newest version stored, the one a new version is most like

    const edited = latest.content.replace('line 120 ', 'LINE 120 edited by hand ');
    project.write('f.txt', edited);
    const manager = await project.open({ resume: sessionId });
    const next = await manager.checkpoint(newId()); // backs up `edited`, similar to the damaged version
    await manager.tools.write({ file_path: 'f.txt', content: 'rewritten\n' });
    expect(await unreadablePaths(manager, next, false)).toEqual([]);
    expect(project.read('f.txt').toString()).toBe(edited);
  });
});
