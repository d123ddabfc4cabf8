/**
 * Runs one real rewind in a process of its own and reports its memory: the
 * resident set before opening the session, after, and its peak (VmHWM, the
 * kernel's high-water mark of the resident set, which covers the whole life
 * of the process). Usage (from bench/scenarios/rewind-peak-memory.ts):
 *   node --import tsx bench/children/rewind-peak-memory.ts <cwd> <storeDir> <sessionId> <checkpointId>
 */
import fs from 'node:fs';
import { CheckpointManager } from '../../src/index.js';

const [cwd, storeDir, sessionId, checkpointId] = process.argv.slice(2);
if (checkpointId === undefined) throw new Error('usage: rewind-peak-memory.ts <cwd> <storeDir> <sessionId> <checkpointId>');

function statusKiB(field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  if (match === null) throw new Error(`no ${field} in /proc/self/status`);
  return Number(match[1]);
}

const beforeOpenKiB = statusKiB('VmRSS');
const manager = await CheckpointManager.open({ cwd: cwd!, storeDir: storeDir!, resume: sessionId!, durability: 'none' });
const openedKiB = statusKiB('VmRSS');
const started = performance.now();
const result = await manager.rewindFiles(checkpointId);
const rewindMs = performance.now() - started;
await manager.close();
console.log(
  JSON.stringify({
    beforeOpenKiB,
    openedKiB,
    peakKiB: statusKiB('VmHWM'),
    maxRssKiB: process.resourceUsage().maxRSS,
    filesChanged: result.filesChanged?.length ?? 0,
    rewindMs,
  }),
);
