import { applyPatchTool, tool, type ApplyPatchTool, type Editor, type FunctionTool } from '@openai/agents';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { CheckpointManager } from '../../src/index.js';
import { trackApplyPatchTool, trackEditor, trackFunctionTool, type FunctionToolInput } from '../../src/integrations/openai-agents.js';

declare const manager: CheckpointManager;
declare const editor: Editor;

const saveConfig = tool({
  name: 'save_config',
  description: 'Save a config file.',
  parameters: z.object({ target: z.string(), retries: z.number() }),
  execute: async ({ target }) => ({ saved: target }),
});

describe('the OpenAI Agents wrappers keep the SDK’s types', () => {
  it('returns a function tool of exactly the given type, with typed path fields', () => {
    expectTypeOf(trackFunctionTool(manager, saveConfig, { paths: ['target'] })).toEqualTypeOf(saveConfig);
    expectTypeOf(trackFunctionTool(manager, saveConfig)).toExtend<FunctionTool<unknown, never, unknown>>();
    expectTypeOf<FunctionToolInput<typeof saveConfig>>().toEqualTypeOf<{ target: string; retries: number }>();
    trackFunctionTool(manager, saveConfig, { paths: (input) => input.target });
    // @ts-expect-error `retries` is a number, not a path
    trackFunctionTool(manager, saveConfig, { paths: ['retries'] });
  });

  it('returns an Editor and an ApplyPatchTool', () => {
    expectTypeOf(trackEditor(manager, editor)).toEqualTypeOf<Editor>();
    expectTypeOf(trackApplyPatchTool(manager, applyPatchTool({ editor }))).toEqualTypeOf<ApplyPatchTool>();
  });
});
