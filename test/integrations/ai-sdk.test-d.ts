import { tool, type InferToolInput, type InferToolOutput, type Tool } from 'ai';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { CheckpointManager, EditResult, WriteResult } from '../../src/index.js';
import { fileTools, trackTools } from '../../src/integrations/ai-sdk.js';

declare const manager: CheckpointManager;

const saveConfig = tool({
  inputSchema: z.object({ target: z.string(), json: z.record(z.string(), z.unknown()), retries: z.number() }),
  execute: async ({ target }) => ({ saved: target }),
});
const weather = tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `Sunny in ${city}` });

describe('trackTools keeps the AI SDK tool types', () => {
  it('returns a tool set of exactly the given type', () => {
    const tools = { saveConfig, weather };
    const tracked = trackTools(manager, tools, { paths: { saveConfig: ['target'] } });
    expectTypeOf(tracked).toEqualTypeOf(tools);
    expectTypeOf<InferToolInput<typeof tracked.saveConfig>>().toEqualTypeOf<{ target: string; json: Record<string, unknown>; retries: number }>();
    expectTypeOf<InferToolOutput<typeof tracked.saveConfig>>().toEqualTypeOf<{ saved: string }>();
  });

  it('returns a single tool of exactly its type', () => {
    expectTypeOf(trackTools(manager, saveConfig, { paths: ['target'], name: 'saveConfig' })).toEqualTypeOf(saveConfig);
    expectTypeOf(trackTools(manager, saveConfig, { paths: (input) => input.target })).toEqualTypeOf(saveConfig);
  });

  it('accepts only fields that hold paths, per tool', () => {
    // @ts-expect-error `retries` is a number, not a path
    trackTools(manager, saveConfig, { paths: ['retries'] });
    // @ts-expect-error `city` is a field of weather, not of saveConfig
    trackTools(manager, { saveConfig, weather }, { paths: { saveConfig: ['city'] } });
    // @ts-expect-error `missing` is not a tool of the set
    trackTools(manager, { saveConfig, weather }, { paths: { missing: ['city'] } });
  });

  it('types the file tools with our inputs and results', () => {
    const tools = fileTools(manager);
    expectTypeOf(tools.Write).toExtend<Tool>();
    expectTypeOf<InferToolInput<typeof tools.Edit>>().toEqualTypeOf<{ file_path: string; old_string: string; new_string: string; replace_all: boolean }>();
    expectTypeOf<InferToolOutput<typeof tools.Write>>().toEqualTypeOf<WriteResult>();
    expectTypeOf<InferToolOutput<typeof tools.Edit>>().toEqualTypeOf<EditResult>();
  });
});
