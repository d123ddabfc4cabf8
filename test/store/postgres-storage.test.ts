import { afterAll, beforeAll, describe, it } from 'vitest';
import { postgresStorage } from '../../src/store/postgres/postgres-storage.js';
import { runStorageConformance } from '../../src/testing/index.js';
import { fastTestSettings, startPostgres, type PostgresServer } from '../helpers/postgres-server.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres({ settings: fastTestSettings });
});
afterAll(async () => {
  await server?.destroy();
});

runStorageConformance({
  name: 'postgres',
  create: () => postgresStorage({ connection: server.connectionString }),
  reopen: () => postgresStorage({ connection: server.connectionString }),
  describe,
  it,
});
