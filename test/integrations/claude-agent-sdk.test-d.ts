import { query, type HookCallback, type HookCallbackMatcher, type HookEvent, type Options, type SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';
import { describe, expectTypeOf, it } from 'vitest';
import type { CheckpointManager } from '../../src/index.js';
import { createCheckpointHooks, mergeHooks, withCheckpoints } from '../../src/integrations/claude-agent-sdk.js';

declare const manager: CheckpointManager;
declare const userMessages: AsyncIterable<SDKUserMessage>;

describe('the Claude Agent SDK hooks have the SDK’s own types', () => {
  it('registers HookCallbacks in HookCallbackMatchers, keyed by HookEvent', () => {
    const { hooks } = createCheckpointHooks(manager);
    expectTypeOf(hooks).toEqualTypeOf<Partial<Record<HookEvent, HookCallbackMatcher[]>>>();
    expectTypeOf(hooks.PreToolUse![0]!.hooks[0]!).toEqualTypeOf<HookCallback>();
    expectTypeOf(hooks).toExtend<NonNullable<Options['hooks']>>();
  });

  it('fits query() as its options and prompt, keeping the caller’s option types', () => {
    const checkpoints = createCheckpointHooks(manager, { trackSubagents: false, outsideProject: 'allow', tools: { mcp__files__save: ['target'] } });
    query({ prompt: checkpoints.prompt(userMessages), options: checkpoints.options({ cwd: '/project', permissionMode: 'acceptEdits' }) });
    query({ prompt: 'Fix the test', options: withCheckpoints(manager, { cwd: '/project' }) });
    const options = withCheckpoints(manager, { cwd: '/project', maxTurns: 3 });
    expectTypeOf(options.maxTurns).toEqualTypeOf<number>();
    expectTypeOf(options).toExtend<Options>();
    expectTypeOf(mergeHooks(options.hooks, undefined)).toExtend<Options['hooks']>();
  });

  it('rejects options the hooks do not have', () => {
    // @ts-expect-error outsideProject is 'deny' or 'allow'
    createCheckpointHooks(manager, { outsideProject: 'ignore' });
  });
});
