/**
 * One capture-scope session in a process of its own, driven by the journal
 * scenario (bench/scenarios/capture-journal.ts) over IPC, so that each
 * contender's memory is its own: the resident set after the first checkpoint
 * (watchers included) and the peak (VmHWM) over the process's life.
 *
 *   fork('bench/children/capture-journal-session.ts', [cwd, storeDir, 'journal' | 'full'])
 *
 * Messages in: `{ kind: 'checkpoint' }`, `{ kind: 'close' }`. Out: `{ kind: 'ready' }`, then one
 * `CheckpointReport` per checkpoint, then `{ kind: 'closed' }`.
 */
import fs from 'node:fs';
import { CheckpointManager } from '../lib/library.js';

export interface CheckpointReport {
  kind: 'checkpoint';
  ms: number;
  /** How the scan was taken: 'journal' or 'full' (undefined from a library without the journal). */
  via: string | undefined;
  fullScanReason: string | undefined;
  scanned: number;
  modified: number;
  created: number;
  deleted: number;
  rssKiB: number;
  peakKiB: number;
}

const [cwd, storeDir, mode] = process.argv.slice(2);
if (mode !== 'journal' && mode !== 'full') throw new Error('usage: capture-journal-session.ts <cwd> <storeDir> journal|full');

function statusKiB(field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  if (match === null) throw new Error(`no ${field} in /proc/self/status`);
  return Number(match[1]);
}

const send = (message: object) => new Promise<void>((resolve, reject) => process.send!(message, (error: Error | null) => (error ? reject(error) : resolve())));

// Each contender says which way it scans; a library without the option ignores the key.
const capture = { journal: mode === 'journal' } as Parameters<typeof CheckpointManager.open>[0]['capture'];
const manager = await CheckpointManager.open({ cwd: cwd!, storeDir: storeDir!, durability: 'none', capture });

let queue = Promise.resolve();
process.on('message', (message: { kind: 'checkpoint' | 'close' }) => {
  queue = queue.then(async () => {
    if (message.kind === 'close') {
      await manager.close();
      await send({ kind: 'closed' });
      process.disconnect();
      return;
    }
    const started = performance.now();
    await manager.checkpoint();
    const ms = performance.now() - started;
    const scan = manager.lastScan! as typeof manager.lastScan & { via?: string; fullScanReason?: string };
    const report: CheckpointReport = {
      kind: 'checkpoint',
      ms,
      via: scan.via,
      fullScanReason: scan.fullScanReason,
      scanned: scan.scanned,
      modified: scan.modified.length,
      created: scan.created.length,
      deleted: scan.deleted.length,
      rssKiB: statusKiB('VmRSS'),
      peakKiB: statusKiB('VmHWM'),
    };
    await send(report);
  });
});
await send({ kind: 'ready' });
