import type { CheckpointManager } from '../checkpoint-manager.js';
import { RewindableError } from '../errors.js';
import { recordCall, type RecordedCall } from '../tools/record-call.js';
import type { WriteWarningHandler } from '../tools/tool-warnings.js';

/**
 * Input fields read for paths when an adapter is not told which fields hold
 * them: Claude Code's names (`file_path`, `notebook_path`) and the plain
 * `path` most other file tools use.
 */
export const defaultPathFields = ['file_path', 'notebook_path', 'path'] as const;

/** A path selector for any input (adapters see inputs the framework has typed loosely). */
export type LoosePathSelector = readonly string[] | ((input: never) => unknown);

/** What one tracked tool call is: the tool, its call id, and the files it will write (as the input names them). */
export interface TrackedCall extends RecordedCall {
  paths: readonly string[];
}

/**
 * The paths a tool input names: the fields `selector` lists (or the default
 * fields), or what `selector` returns. Absent fields are skipped; anything
 * that is not a path is passed on, so `trackEdit` refuses it with
 * `INVALID_PATH`.
 */
export function selectPaths(selector: LoosePathSelector | undefined, input: unknown): string[] {
  if (typeof selector === 'function') return flatten((selector as (input: unknown) => unknown)(input));
  if (typeof input !== 'object' || input === null) return [];
  const fields = input as Record<string, unknown>;
  return (selector ?? defaultPathFields).flatMap((field) => flatten(fields[field]));
}

function flatten(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]) as string[];
}

/**
 * Backs up every file the call will write, in order; resolves to their
 * canonical paths. Rejects with the first `RewindableError` (outside the
 * project, a link, no checkpoint yet ...): the call must not run then.
 */
export async function trackCall(manager: CheckpointManager, call: TrackedCall): Promise<string[]> {
  const files = [...new Set(call.paths.map((file) => manager.resolvePath(file)))];
  for (const file of files) await manager.trackEdit(file);
  return files;
}

/** What the model is told when a call is refused because its files could not be backed up. */
export function refusalReason(call: Pick<TrackedCall, 'tool' | 'paths'>, error: unknown): string {
  const files = call.paths.length > 0 ? call.paths.join(', ') : 'its files';
  return `rewindable could not back up ${files} before this ${call.tool} call, so the call was refused: ${error instanceof Error ? error.message : String(error)}`;
}

/** The tracking error again, with the refusal as its message: the same code, the original error as its cause. */
export function refusalError(call: Pick<TrackedCall, 'tool' | 'paths'>, error: unknown): unknown {
  if (!RewindableError.isInstance(error)) return error;
  return new RewindableError(error.code, refusalReason(call, error), { cause: error, details: error.details });
}

export interface RunTrackedOptions<Result> {
  /** The result to give instead of running the call when tracking fails; without it, the refusal is thrown (`refusalError`). */
  refuse?: (reason: string, error: unknown) => Result | PromiseLike<Result>;
  /** Replaces `recordCall`, for a framework that tells the call's id only once the call has run. It must not reject. */
  record?: (files: readonly string[]) => Promise<void>;
  /** Told when the call ran but its write could not be recorded (`recordCall`). */
  onWarning?: WriteWarningHandler | undefined;
}

/**
 * Runs a tool call between `trackCall` and `recordCall`. When tracking
 * fails, the call does not run, and is refused (`refuse`). Once it has run,
 * its outcome is its own, result or error, unchanged: a write that cannot be
 * recorded then is a warning. A result that is an async iterable (a streaming
 * tool's output) is written while it is iterated, so its writes are recorded
 * once the iteration ends.
 */
export async function runTracked<Result>(manager: CheckpointManager, call: TrackedCall, run: () => Result | PromiseLike<Result>, options: RunTrackedOptions<Result> = {}): Promise<Result> {
  const record = options.record ?? ((files) => recordCall(manager, call, files, options.onWarning));
  let files: string[];
  try {
    files = await trackCall(manager, call);
  } catch (error) {
    if (options.refuse === undefined) throw refusalError(call, error);
    return await options.refuse(refusalReason(call, error), error);
  }
  let result: Result;
  try {
    result = await run();
  } catch (error) {
    // A failed call may have written part of a file; that is still the agent's write, not a conflict.
    await record(files);
    throw error;
  }
  if (files.length > 0 && isAsyncIterable(result)) return recordAfter(files, result, record) as Result;
  await record(files);
  return result;
}

/** `runTracked` for a call that is itself an async generator: tracks before the first value, records after the last. */
export async function* streamTracked<Value>(manager: CheckpointManager, call: TrackedCall, run: () => AsyncIterable<Value>, onWarning: WriteWarningHandler | undefined): AsyncGenerator<Value> {
  let files: string[];
  try {
    files = await trackCall(manager, call);
  } catch (error) {
    throw refusalError(call, error);
  }
  yield* recordAfter(files, run(), (written) => recordCall(manager, call, written, onWarning));
}

export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function';
}

async function* recordAfter<Value>(files: readonly string[], iterable: AsyncIterable<Value>, record: (files: readonly string[]) => Promise<void>): AsyncGenerator<Value> {
  try {
    yield* iterable;
  } finally {
    await record(files);
  }
}
