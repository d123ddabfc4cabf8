import { spawn } from 'node:child_process';

export interface ChildOutcome {
  /** Every JSON line the child printed, in order. */
  lines: Array<Record<string, unknown>>;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs a bundled worker with one JSON argument and collects its JSON lines.
 * With `killAfterMs`, the test SIGKILLs it itself after that delay (time-based
 * kill points, on top of the deterministic ones the worker makes).
 */
export function runChild(script: string, argument: unknown, options: { killAfterMs?: number; timeoutMs?: number } = {}): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(argument)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killTimer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
    const watchdog = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killTimer);
      clearTimeout(watchdog);
      // A line cut off by the kill is not a report.
      const lines = stdout
        .split('\n')
        .filter((line) => line.endsWith('}'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ lines, code, signal, stderr });
    });
  });
}

/** Runs `work` over `items` with at most `limit` in flight (the machine has two cores). */
export async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      await work(items[index]!, index);
    }
  });
  await Promise.all(lanes);
}
