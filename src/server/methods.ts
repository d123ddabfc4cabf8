import { z } from 'zod';
import { version } from '../../package.json';
import { CheckpointManager } from '../checkpoint-manager.js';
import { listSessions } from '../session/list-sessions.js';
import type { SessionHandles } from './session-handles.js';

/**
 * The protocol's methods: each one a zod schema of its params and a thin
 * handler over the public API. Wire names are the library's own option and
 * result names; results are the library's results, as JSON.
 */

export const protocolVersion = 1;

/** What a handler may use besides its params. */
export interface CallContext {
  sessions: SessionHandles;
  /** The store of a request that names none: `--store`, else $REWINDABLE_HOME, else ~/.rewindable. */
  defaultStore: string;
  /** Sends a `progress` notification; set when the request carries a `progressToken`. */
  progress: ((update: { done: number; total: number; path: string }) => void) | undefined;
  /** Waits for the other requests, then closes every session (shutdown). */
  shutdown(): Promise<void>;
}

export interface Method {
  params: z.ZodType;
  run(params: unknown, context: CallContext): Promise<unknown>;
}

/** A method whose handler gets its params as the schema parsed them (the server runs it with nothing else). */
function method<Schema extends z.ZodType>(params: Schema, run: (params: z.output<Schema>, context: CallContext) => Promise<unknown>): Method {
  return { params, run: (value, context) => run(value as z.output<Schema>, context) };
}

/**
 * Params are one object; unknown fields are refused, so a misspelt `dryRun`
 * never turns a preview into a rewind. Every method takes a `progressToken`,
 * which the server takes out before the handler runs (see `CallContext.progress`).
 */
function paramsOf<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject({ ...shape, progressToken: z.union([z.string(), z.number()]).optional() });
}

const uuid = z.uuid({ error: 'expected a UUID such as "3f0c2a8e-6a1b-4c4e-9f3e-2b7d5c1a9e40"' });
const handle = z.string().min(1);
const paths = z.array(z.string());
const rewindConflictChoice = z.enum(['overwrite', 'skip', 'merge', 'markers']);

const sessionOption = z.union([
  z.strictObject({ id: uuid.optional() }),
  z.strictObject({ resume: uuid, readOnly: z.boolean().optional() }),
  z.literal('continue'),
], { error: "expected { id?: UUID } to start a new session, { resume: UUID, readOnly?: boolean } to reopen one, or 'continue'" });

const captureOptions = z.union([
  z.boolean(),
  z.strictObject({
    include: z.array(z.string()).optional(),
    exclude: z.array(z.string()).optional(),
    gitignore: z.boolean().optional(),
    maxFileBytes: z.number().int().positive().optional(),
  }),
], { error: 'expected true, false, or { include?, exclude?, gitignore?, maxFileBytes? }' });

const rewindFilesOptions = {
  dryRun: z.boolean().optional(),
  skipConflicts: z.boolean().optional(),
  onConflict: rewindConflictChoice.optional(),
  paths: paths.optional(),
};

const diffOptions = {
  paths: paths.optional(),
  context: z.number().int().nonnegative().optional(),
  maxPatchBytes: z.number().int().nonnegative().optional(),
  timeoutMs: z.number().nonnegative().optional(),
  maxEditLength: z.number().int().nonnegative().optional(),
  binary: z.boolean().optional(),
  skipConflicts: z.boolean().optional(),
};

const empty = {};

export const methods = {
  initialize: method(paramsOf({ client: z.string().optional() }), async (): Promise<object> => ({ protocolVersion, serverVersion: version, methods: Object.keys(methods) })),

  listSessions: method(paramsOf({ cwd: z.string().min(1), store: z.string().min(1).optional() }), async ({ cwd, store }, context) =>
    listSessions({ cwd, storeDir: store ?? context.defaultStore }),
  ),

  open: method(
    paramsOf({
      cwd: z.string().min(1),
      store: z.string().min(1).optional(),
      session: sessionOption.optional(),
      durability: z.enum(['full', 'none']).optional(),
      capture: captureOptions.optional(),
    }),
    async ({ cwd, store, session, durability, capture }, context) => {
      const manager = await CheckpointManager.open({
        cwd,
        storeDir: store ?? context.defaultStore,
        ...(session !== undefined ? { session } : {}),
        ...(durability !== undefined ? { durability } : {}),
        ...(capture !== undefined ? { capture } : {}),
      });
      const opened = context.sessions.add(manager);
      return { handle: opened, sessionId: manager.sessionId, root: manager.root };
    },
  ),

  close: method(paramsOf({ handle }), async (params, context) => {
    await context.sessions.close(params.handle);
    return empty;
  }),

  checkpoint: method(paramsOf({ handle, userMessageId: uuid.optional() }), async (params, context) =>
    context.sessions.run(params.handle, async (manager) => ({ checkpointId: await manager.checkpoint(params.userMessageId) })),
  ),

  trackEdit: method(paramsOf({ handle, path: z.string() }), async (params, context) =>
    context.sessions.run(params.handle, async (manager) => {
      await manager.trackEdit(params.path);
      return empty;
    }),
  ),

  recordWrite: method(paramsOf({ handle, path: z.string(), tool: z.string().optional(), toolCallId: z.string().optional() }), async ({ handle: named, path, ...details }, context) =>
    context.sessions.run(named, async (manager) => {
      await manager.recordWrite(path, details);
      return empty;
    }),
  ),

  scanBegin: method(paramsOf({ handle, label: z.string().optional() }), async (params, context) => ({ scanId: await context.sessions.scanBegin(params.handle, params.label) })),

  scanEnd: method(paramsOf({ handle, scanId: z.string().min(1) }), async (params, context) => context.sessions.scanEnd(params.handle, params.scanId)),

  rewindFiles: method(
    paramsOf({ handle, userMessageId: uuid, ...rewindFilesOptions, hunks: z.array(z.string()).optional() }),
    async ({ handle: named, userMessageId, ...options }, context) => context.sessions.run(named, (manager) => manager.rewindFiles(userMessageId, options)),
  ),

  revertTurn: method(
    paramsOf({ handle, userMessageId: uuid, dryRun: z.boolean().optional(), paths: paths.optional(), onConflict: z.enum(['skip', 'markers', 'overwrite']).optional() }),
    async ({ handle: named, userMessageId, ...options }, context) => context.sessions.run(named, (manager) => manager.revertTurn(userMessageId, options)),
  ),

  diffFiles: method(paramsOf({ handle, userMessageId: uuid, ...diffOptions }), async ({ handle: named, userMessageId, ...options }, context) =>
    context.sessions.run(named, (manager) => manager.diffFiles(userMessageId, { ...options, ...(context.progress !== undefined ? { onProgress: context.progress } : {}) })),
  ),

  listCheckpoints: method(paramsOf({ handle }), async (params, context) => context.sessions.run(params.handle, (manager) => manager.listCheckpoints())),

  recordUserMessage: method(paramsOf({ handle, message: z.unknown(), uuid: uuid.optional(), parentUuid: uuid.nullable().optional() }), async ({ handle: named, message, ...ids }, context) =>
    context.sessions.run(named, (manager) => manager.recordUserMessage(message, ids)),
  ),

  recordMessage: method(
    paramsOf({ handle, type: z.string().min(1), message: z.unknown(), uuid: uuid.optional(), parentUuid: uuid.nullable().optional() }),
    async ({ handle: named, ...input }, context) => context.sessions.run(named, (manager) => manager.recordMessage(input)),
  ),

  getTranscript: method(paramsOf({ handle, leafUuid: uuid.optional() }), async ({ handle: named, leafUuid }, context) =>
    context.sessions.run(named, (manager) => manager.getTranscript(leafUuid !== undefined ? { leafUuid } : {})),
  ),

  listBranches: method(paramsOf({ handle }), async (params, context) => context.sessions.run(params.handle, (manager) => manager.listBranches())),

  rewind: method(
    paramsOf({ handle, userMessageId: uuid, scope: z.enum(['files', 'conversation', 'both']).optional(), ...rewindFilesOptions }),
    async ({ handle: named, userMessageId, ...options }, context) => context.sessions.run(named, (manager) => manager.rewind(userMessageId, options)),
  ),

  shutdown: method(paramsOf({}), async (_params, context) => {
    await context.shutdown();
    return empty;
  }),
} satisfies Record<string, Method>;

export type MethodName = keyof typeof methods;
