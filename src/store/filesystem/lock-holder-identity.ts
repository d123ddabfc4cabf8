import fs from 'node:fs';

/**
 * What makes a pid in a lock mean a process here. A pid names a process only
 * within its PID namespace and until the machine reboots: a container that
 * shares the host's name (`--uts=host`) but not its processes counts pids of
 * its own, and after a reboot the same pid is someone else. So a lock records
 * its holder's namespace and boot beside the pid, and only a lock of this
 * namespace and boot is judged by its process. Each reads null where /proc is
 * absent (not Linux).
 */

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), so a recycled pid is not taken for the holder. */
export function processStartTime(pid: number): string | null {
  return readOrNull(() => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces; fields after it are space-separated.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  });
}

let ownPidNamespace: string | null | undefined;
let ownBootId: string | null | undefined;

/** This process's PID namespace, as `pid:[4026531836]`. */
export function pidNamespace(): string | null {
  ownPidNamespace ??= readOrNull(() => fs.readlinkSync('/proc/self/ns/pid'));
  return ownPidNamespace;
}

/** The id the kernel drew for this boot. */
export function bootId(): string | null {
  ownBootId ??= readOrNull(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  return ownBootId;
}

function readOrNull(read: () => string | null): string | null {
  try {
    return read();
  } catch {
    return null;
  }
}
