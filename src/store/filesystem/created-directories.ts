import path from 'node:path';
import { flushDirectory } from '../../fs/flush.js';

/**
 * Makes what was just created at `target` durable: its entry in its parent,
 * and so on up to `firstCreated`, the highest directory created for it.
 */
export async function flushCreatedDirectories(target: string, firstCreated: string): Promise<void> {
  for (let current = target; ; current = path.dirname(current)) {
    await flushDirectory(path.dirname(current));
    if (current === firstCreated) break;
  }
}
