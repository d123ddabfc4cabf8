import { describe, expectTypeOf, it } from 'vitest';
import type { CheckpointManager } from '../../src/index.js';
import { trackTool, type PathField } from '../../src/tools/index.js';

declare const manager: CheckpointManager;

interface EditCall {
  file_path: string;
  backup_paths?: string[];
  count: number;
  note?: string | undefined;
}

describe('trackTool keeps the executor type', () => {
  it('returns a function of exactly the executor type', () => {
    const executor = async (input: EditCall, options: { toolCallId: string; signal?: AbortSignal }) => ({ ok: true as const, bytes: input.count, id: options.toolCallId });
    const tracked = trackTool(manager, executor, { paths: ['file_path', 'backup_paths'] });
    expectTypeOf(tracked).toEqualTypeOf(executor);
    expectTypeOf(tracked).parameter(0).toEqualTypeOf<EditCall>();
    expectTypeOf(tracked).returns.resolves.toEqualTypeOf<{ ok: true; bytes: number; id: string }>();
    expectTypeOf(manager.tools.wrap(executor, { paths: ['file_path'] })).toEqualTypeOf(executor);
  });

  it('accepts only input fields that hold paths', () => {
    expectTypeOf<PathField<EditCall>>().toEqualTypeOf<'file_path' | 'backup_paths' | 'note'>();
    const executor = async (input: EditCall) => input.count;
    // @ts-expect-error `count` is a number, not a path
    trackTool(manager, executor, { paths: ['count'] });
    // @ts-expect-error `missing` is not a field of the input
    trackTool(manager, executor, { paths: ['missing'] });
  });

  it('types the input of a paths function and of toolCallId from the executor', () => {
    const executor = async (input: { from: string; to: string }, context: { callId: string }) => `${input.from}->${input.to}:${context.callId}`;
    const tracked = trackTool(manager, executor, {
      paths: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ from: string; to: string }>();
        return [input.from, input.to];
      },
      toolCallId: (_input, context) => context.callId,
    });
    expectTypeOf(tracked).toEqualTypeOf(executor);
    // @ts-expect-error the paths function must return paths
    trackTool(manager, executor, { paths: (input) => input.from.length });
  });

  it('rejects executors that are not async', () => {
    // @ts-expect-error a tool executor returns a promise
    trackTool(manager, (input: { file: string }) => input.file, { paths: ['file'] });
  });
});
