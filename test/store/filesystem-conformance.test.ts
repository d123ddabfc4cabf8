import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { filesystemStorage, type FilesystemStorage } from '../../src/index.js';
import { runStorageConformance } from '../../src/testing/index.js';

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-conformance-store-'));
afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

runStorageConformance({
  name: 'filesystem',
  create: () => filesystemStorage({ directory, durability: 'none' }),
  reopen: (storage) => filesystemStorage({ directory: (storage as FilesystemStorage).directory, durability: 'none' }),
  describe,
  it,
});
