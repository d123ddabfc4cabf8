import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, encodeProjectKey } from '../../src/index.js';
import { BlobPack } from '../../src/store/filesystem/blob-pack.js';
import { sha256 } from '../../src/hash.js';
import { createSandbox, type Sandbox } from './helpers/sandbox.js';

/**
 * Pack fuzzing. A session's pack (its small backups back to back) cut at any
 * byte loses at most the entry the cut falls in; a flipped byte anywhere is
 * caught (the damaged backup reads as missing or fails its hash check) and
 * costs no other entry, not even after a writer opens the pack; and a rewind
 * refuses the path whose backup is damaged (backup-unreadable) and writes
 * nothing there.
 */

const files = ['a.bin', 'b.bin', 'c.bin', 'd.bin', 'e.bin', 'f.bin'];
let sandbox: Sandbox;
let sessionId: string;
let first: string;
let packPath: string;
let pack: Buffer;
/** One entry per file: its hash and the byte range it occupies in the pack. */
let entries: Array<{ file: string; hash: string; start: number; end: number }>;
let originals: Record<string, string>;

beforeAll(async () => {
  sandbox = createSandbox();
  // Random bytes: no entry is stored as a delta of another, so each stands alone.
  originals = Object.fromEntries(files.map((file) => [file, randomBytes(150 + files.indexOf(file) * 40).toString('latin1')]));
  sandbox.writeFiles(originals);
  const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' });
  sessionId = manager.sessionId;
  first = await manager.checkpoint();
  packPath = path.join(sandbox.store, 'blobs', 'packs', encodeProjectKey(sandbox.root), `${sessionId}.pack`);
  entries = [];
  for (const file of files) {
    const start = fs.existsSync(packPath) ? fs.statSync(packPath).size : 0;
    await manager.trackEdit(file);
    entries.push({ file, hash: sha256(Buffer.from(originals[file]!, 'latin1')), start, end: fs.statSync(packPath).size });
  }
  await manager.close();
  pack = fs.readFileSync(packPath);
  expect(entries.at(-1)!.end).toBe(pack.length);
  return () => sandbox.dispose();
});

/** Opens `bytes` as the pack and reports, per entry, whether it reads back exactly. */
function readable(bytes: Buffer, mode: 'read' | 'write' = 'read'): boolean[] {
  fs.writeFileSync(packPath, bytes);
  const opened = BlobPack.open(packPath, mode)!;
  try {
    return entries.map((entry) => {
      if (!opened.has(entry.hash)) return false;
      try {
        return sha256(opened.read(entry.hash)!) === entry.hash;
      } catch {
        return false; // damage found while resolving the entry
      }
    });
  } finally {
    opened.close();
  }
}

describe('pack fuzzing', () => {
  it('a pack cut at any byte keeps every entry that ends before the cut', () => {
    for (let cut = 0; cut <= pack.length; cut += 1) {
      expect(readable(pack.subarray(0, cut)), `cut at byte ${cut}`).toEqual(entries.map((entry) => entry.end <= cut));
    }
  });

  it('a flipped byte costs at most the entry it damages (caught by its hash), even after a writer opened the pack', () => {
    for (let position = 0; position < pack.length; position += 1) {
      const damaged = Buffer.from(pack);
      damaged[position]! ^= 1 << position % 8;
      const hit = entries.findIndex((entry) => position >= entry.start && position < entry.end);
      const context = `bit ${position % 8} of byte ${position} (entry ${hit}, offset ${position - entries[hit]!.start})`;
      // The damaged entry reads as missing or fails its hash (unless the byte was padding); every other reads exactly.
      const found = readable(damaged);
      expect(found.filter((_, index) => index !== hit), context).toEqual(entries.slice(1).map(() => true));
      // A writer cuts off a torn tail; it must not take damage in the middle for one.
      readable(damaged, 'write');
      const repaired = fs.readFileSync(packPath);
      if (repaired.length >= position + 1) repaired[position] = pack[position]!;
      expect(readable(repaired.length === pack.length ? repaired : Buffer.concat([repaired, pack.subarray(repaired.length)])), `${context}, after a writer opened it`).toEqual(
        entries.map(() => true),
      );
    }
  });

  it('a rewind refuses the path whose backup is damaged (backup-unreadable) and writes nothing there', async () => {
    for (const [entryIndex, offset] of [
      [1, 0], // the entry's header
      [2, 30], // the hash in its header
      [3, 100], // its bytes
    ] as const) {
      fs.writeFileSync(packPath, pack);
      sandbox.writeFiles(Object.fromEntries(files.map((file) => [file, `edited ${file}\n`])));
      const damaged = Buffer.from(pack);
      damaged[entries[entryIndex]!.start + offset]! ^= 0x20;
      fs.writeFileSync(packPath, damaged);
      const manager = await CheckpointManager.open({ cwd: sandbox.root, storeDir: sandbox.store, durability: 'none', resume: sessionId });

      const preview = await manager.rewindFiles(first, { dryRun: true });
      const result = await manager.rewindFiles(first);

      const victim = files[entryIndex]!;
      for (const outcome of [preview, result]) {
        expect(outcome.skipped, `damage at offset ${offset} of ${victim}'s entry`).toEqual([expect.objectContaining({ path: path.join(sandbox.root, victim), reason: 'backup-unreadable' })]);
        expect(outcome.skippedLinks).toBe(1);
      }
      expect(sandbox.files()).toEqual({ ...originals, [victim]: `edited ${victim}\n` });
      await manager.close();
    }
  });
});
