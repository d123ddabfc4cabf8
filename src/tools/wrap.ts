import type { ToolManager } from './manager-port.js';
import { recordCall } from './record-call.js';
import { invalidToolInput } from './tool-errors.js';
import type { WriteWarningHandler } from './tool-warnings.js';

/** Any async tool executor: an input, then whatever else the framework passes. */
export type ToolExecutor = (input: never, ...rest: never[]) => Promise<unknown>;

/** Names of the input's fields that hold a path or a list of paths. */
export type PathField<Input> = Input extends object
  ? { [Key in keyof Input]-?: NonNullable<Input[Key]> extends string | readonly string[] ? Key : never }[keyof Input] & string
  : never;

/** Which files a call will write: input field names, or a function of the input. */
export type PathSelector<Input> = readonly PathField<Input>[] | ((input: Input) => string | readonly string[] | undefined);

export interface TrackToolOptions<Executor extends ToolExecutor> {
  /**
   * The files a call writes, backed up before the executor runs: the names of
   * input fields holding a path (or a list of paths; an absent optional field
   * is skipped), or a function returning the paths. Relative paths resolve
   * against the project root.
   */
  paths: PathSelector<Parameters<Executor>[0]>;
  /**
   * The tool's name, recorded with each write and used in error messages.
   * @default the executor's function name
   */
  tool?: string;
  /** Finds the framework's tool call id in the call's arguments, to record with each write. */
  toolCallId?: (...args: Parameters<Executor>) => string | undefined;
  /**
   * Told when the executor ran but the record of what it wrote could not be
   * stored (its files were backed up before, so a rewind still restores
   * them). The executor's result is returned all the same.
   * @default a process warning (`process.emitWarning`, type `RewindableWarning`)
   */
  onWarning?: WriteWarningHandler;
}

/**
 * Wraps a custom tool executor so every file it writes is tracked: before
 * each call, the files named by `paths` are backed up (`trackEdit`); if that
 * fails (a path outside the project, a link, no checkpoint yet ...), the call
 * is refused with a `RewindableError` and the executor does not run. Once the
 * executor resolves, what it wrote is recorded (`recordWrite`) and its result
 * returned, also when that record fails (`onWarning` is told). Errors of the
 * executor itself propagate unchanged. The wrapped function has the
 * executor's exact type.
 *
 * @example
 * const writeConfig = trackTool(manager, async (input: { target: string; json: object }) => {
 *   await fs.writeFile(path.resolve(manager.root, input.target), JSON.stringify(input.json));
 *   return { ok: true };
 * }, { paths: ['target'] });
 * await writeConfig({ target: 'config.json', json: { debug: true } });
 */
export function trackTool<Executor extends ToolExecutor>(manager: ToolManager, executor: Executor, options: TrackToolOptions<Executor>): Executor {
  const tool = options.tool ?? (executor.name || 'tool');
  const tracked = async function (this: unknown, ...args: Parameters<Executor>): Promise<unknown> {
    const files = [...new Set(selectPaths(tool, options.paths as LoosePathSelector, args[0]).map((file) => manager.resolvePath(file)))];
    for (const file of files) await manager.trackEdit(file);
    const output = await (executor as unknown as (...values: unknown[]) => Promise<unknown>).apply(this, args);
    await recordCall(manager, { tool, toolCallId: options.toolCallId?.(...args) }, files, options.onWarning);
    return output;
  };
  Object.defineProperty(tracked, 'name', { value: executor.name });
  return tracked as unknown as Executor;
}

type LoosePathSelector = readonly string[] | ((input: never) => unknown);

function selectPaths(tool: string, selector: LoosePathSelector, input: unknown): string[] {
  if (typeof selector === 'function') {
    const selected = selector(input as never);
    if (selected === undefined) return [];
    return (Array.isArray(selected) ? selected : [selected]).map((value) => checkedPath(tool, 'paths', value, 'the paths function'));
  }
  if (selector.length === 0) return [];
  if (typeof input !== 'object' || input === null) throw invalidToolInput(tool, 'input', 'must be an object with the fields that name the files it writes');
  const fields = input as Record<string, unknown>;
  return selector.flatMap((field) => {
    const value = fields[field];
    if (value === undefined || value === null) return [];
    return Array.isArray(value) ? value.map((item) => checkedPath(tool, field, item)) : [checkedPath(tool, field, value)];
  });
}

function checkedPath(tool: string, field: string, value: unknown, source = field): string {
  if (typeof value !== 'string') throw invalidToolInput(tool, field, `must be a file path (a string), but ${source} gave ${value === null ? 'null' : typeof value}`);
  if (value.length === 0) throw invalidToolInput(tool, field, 'must not be an empty path');
  if (value.includes('\0')) throw invalidToolInput(tool, field, 'must not contain a NUL byte');
  return value;
}
