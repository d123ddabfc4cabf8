import { tool } from '@langchain/core/tools';
import { createAgent, type AgentMiddleware } from 'langchain';
import { fakeModel } from '@langchain/core/testing';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { CheckpointManager } from '../../src/index.js';
import { checkpointMiddleware, trackStructuredTool, type StructuredToolInput } from '../../src/integrations/langchain.js';

declare const manager: CheckpointManager;

const saveConfig = tool(async ({ target }) => `saved ${target}`, {
  name: 'save_config',
  description: 'Save a config file.',
  schema: z.object({ target: z.string(), retries: z.number() }),
});

describe('the LangChain adapters keep LangChain’s types', () => {
  it('returns a tool of exactly the given type, with typed path fields', () => {
    expectTypeOf(trackStructuredTool(manager, saveConfig, { paths: ['target'] })).toEqualTypeOf(saveConfig);
    expectTypeOf<StructuredToolInput<typeof saveConfig>>().toEqualTypeOf<{ target: string; retries: number }>();
    trackStructuredTool(manager, saveConfig, { paths: (input) => input.target });
    // @ts-expect-error `retries` is a number, not a path
    trackStructuredTool(manager, saveConfig, { paths: ['retries'] });
  });

  it('is agent middleware that createAgent accepts', () => {
    const middleware = checkpointMiddleware(manager, { tools: { save_config: ['target'], write_file: (args) => String(args.file_path) } });
    expectTypeOf(middleware).toExtend<AgentMiddleware>();
    createAgent({ model: fakeModel(), tools: [saveConfig], middleware: [middleware] });
    // @ts-expect-error tools is a list of names or a record of path selectors
    checkpointMiddleware(manager, { tools: 'write_file' });
  });
});
