/**
 * Takes a session's lock through the PostgreSQL adapter, says so, and waits
 * to be killed. Usage: node --import tsx lock-holder.ts <connection> <projectKey> <sessionId>
 */
import { postgresStorage } from '../../../src/store/postgres/postgres-storage.js';

const [connection, projectKey, sessionId] = process.argv.slice(2) as [string, string, string];
const storage = postgresStorage({ connection });
await storage.lock({ projectKey, sessionId });
process.stdout.write('locked\n');
setInterval(() => {}, 60_000);
