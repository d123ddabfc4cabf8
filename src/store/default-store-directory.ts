import os from 'node:os';
import path from 'node:path';

/**
 * Where sessions live when no store is given: `$REWINDABLE_HOME`, else
 * `~/.rewindable`. A module of its own, so the CLI can name the store without
 * loading the store's code (a hook event it ignores costs one Node start-up).
 */
export function defaultStoreDirectory(): string {
  const fromEnvironment = process.env.REWINDABLE_HOME;
  return path.resolve(fromEnvironment !== undefined && fromEnvironment !== '' ? fromEnvironment : path.join(os.homedir(), '.rewindable'));
}
