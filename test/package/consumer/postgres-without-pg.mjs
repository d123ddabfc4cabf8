// Run by test/package.test.ts in a project that installed the packed package but not `pg`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { CheckpointManager as EsmManager } from 'rewindable';
import { postgresStorage as esmPostgresStorage } from 'rewindable/storage/postgres';

const require = createRequire(import.meta.url);
const builds = {
  esm: { CheckpointManager: EsmManager, postgresStorage: esmPostgresStorage },
  cjs: { CheckpointManager: require('rewindable').CheckpointManager, postgresStorage: require('rewindable/storage/postgres').postgresStorage },
};
const project = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-without-pg-'));
const failures = {};
for (const [build, { CheckpointManager, postgresStorage }] of Object.entries(builds)) {
  const storage = postgresStorage({ connection: 'postgres://rewindable@127.0.0.1:1/rewindable' });
  try {
    await CheckpointManager.open({ cwd: project, storage });
    failures[build] = 'opened';
  } catch (error) {
    failures[build] = { name: error.name, code: error.code, message: error.message, details: error.details };
  }
}
process.stdout.write(JSON.stringify(failures));
fs.rmSync(project, { recursive: true, force: true });
