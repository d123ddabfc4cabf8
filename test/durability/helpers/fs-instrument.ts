import fs from 'node:fs';

/**
 * Intercepts the `node:fs` functions rewindable calls. The library imports the
 * default `fs` object and looks each function up when it calls it, so
 * replacing properties of that object puts a hook in front of every call, in
 * this process only. Used in-process for fault injection and, in child
 * processes, to SIGKILL the process at an exact call.
 */

/** Functions that change the disk (or make changes durable): the crash sweep's kill points. */
export const mutatingCalls = [
  'openSync',
  'writeSync',
  'writevSync',
  'writeFileSync',
  'renameSync',
  'unlinkSync',
  'rmSync',
  'linkSync',
  'mkdirSync',
  'ftruncateSync',
  'fchmodSync',
  'chmodSync',
  'fsync',
  'fdatasync',
  'fsyncSync',
  'fdatasyncSync',
] as const;

/** Every function that can fail with an errno: the fault injector's targets. */
export const failingCalls = [
  ...mutatingCalls,
  'closeSync',
  'readSync',
  'readFileSync',
  'fstatSync',
  'lstatSync',
  'statSync',
  'readdirSync',
  'readlinkSync',
  'realpathSync.native',
] as const;

export type CallName = (typeof failingCalls)[number];

/** Callback-style functions: a failure is delivered to the callback, as the real ones do. */
const callbackCalls: ReadonlySet<string> = new Set(['fsync', 'fdatasync']);

/**
 * Decides what happens to one call: return an error to make the call fail
 * with it (without running it), or undefined to let it run.
 */
export type CallHook = (name: CallName, args: readonly unknown[]) => Error | undefined;

/** Sees what a call returned (the fault injector maps file descriptors to paths with it). */
export type ResultHook = (name: CallName, args: readonly unknown[], result: unknown) => void;

/** Puts `hook` in front of `names`; returns the function that restores the originals. */
export function instrumentFs(names: readonly CallName[], hook: CallHook, onResult?: ResultHook): () => void {
  const restores: Array<() => void> = [];
  for (const name of names) {
    const [owner, property] = name === 'realpathSync.native' ? [fs.realpathSync as unknown as Record<string, unknown>, 'native'] : [fs as unknown as Record<string, unknown>, name];
    const original = owner[property] as (...args: unknown[]) => unknown;
    const replacement = callbackCalls.has(name)
      ? function (this: unknown, ...args: unknown[]) {
          const error = hook(name, args);
          if (error === undefined) return original.apply(this, args);
          const callback = args.at(-1) as (error: Error) => void;
          process.nextTick(callback, error);
          return undefined;
        }
      : function (this: unknown, ...args: unknown[]) {
          const error = hook(name, args);
          if (error !== undefined) throw error;
          const result = original.apply(this, args);
          onResult?.(name, args, result);
          return result;
        };
    owner[property] = replacement;
    restores.push(() => {
      owner[property] = original;
    });
  }
  return () => {
    for (const restore of restores.reverse()) restore();
  };
}

const errnos: Record<string, number> = { ENOSPC: -28, EIO: -5, EACCES: -13 };

/** An error shaped like the ones `node:fs` throws. */
export function errnoError(code: 'ENOSPC' | 'EIO' | 'EACCES', call: string): NodeJS.ErrnoException {
  const syscall = call.replace(/Sync$/, '').replace(/\.native$/, '');
  return Object.assign(new Error(`${code}: injected failure, ${syscall}`), { code, errno: errnos[code], syscall });
}
