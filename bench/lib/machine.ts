import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  git: string;
  /** Filesystem type of the benchmark's temporary directory (projects, stores and shadow repositories live there). */
  filesystem: string;
  date: string;
}

export function describeMachine(temporaryDirectory: string): Machine {
  const cpuinfo = safeRead('/proc/cpuinfo');
  const cpu = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  const git = spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? 'git not found';
  return {
    cpu,
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    git: git.replace(/^git version /, ''),
    filesystem: filesystemOf(temporaryDirectory),
    date: new Date().toISOString(),
  };
}

/** The 1, 5 and 15 minute load averages. */
export function loadAverage(): string {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
}

/** The type of the filesystem mounted at the longest mount point containing `directory` (from /proc/mounts). */
function filesystemOf(directory: string): string {
  const real = fs.realpathSync(directory);
  let best: { mountPoint: string; type: string; device: string } | undefined;
  for (const line of safeRead('/proc/mounts').split('\n')) {
    const [device, mountPoint, type] = line.split(' ');
    if (device === undefined || mountPoint === undefined || type === undefined) continue;
    const inside = real === mountPoint || real.startsWith(mountPoint.endsWith(path.sep) ? mountPoint : mountPoint + path.sep);
    if (inside && (best === undefined || mountPoint.length >= best.mountPoint.length)) best = { mountPoint, type, device };
  }
  if (best === undefined) return 'unknown';
  return `${best.type}${journalNote(best.type, best.device)} (${best.device} on ${best.mountPoint})`;
}

/** ", no journal" for an ext4 filesystem mounted without one: file creation then costs differently (see the benchmarks' notes). */
function journalNote(type: string, device: string): string {
  if (type !== 'ext4') return '';
  const task = safeRead(`/sys/fs/ext4/${path.basename(device)}/journal_task`).trim();
  return task === '<none>' ? ', no journal' : '';
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
