import { defineConfig } from 'tsup';

/** One entry per public subpath (see `exports` in package.json). */
export const entries = {
  index: 'src/index.ts',
  'storage/memory': 'src/store/memory/memory-storage.ts',
  'storage/postgres': 'src/store/postgres/postgres-storage.ts',
  'storage/mirror': 'src/store/mirror/mirrored-storage.ts',
  'testing': 'src/testing/index.ts',
  'ai-sdk': 'src/integrations/ai-sdk.ts',
  'claude-agent-sdk': 'src/integrations/claude-agent-sdk.ts',
  'openai-agents': 'src/integrations/openai-agents.ts',
  'langchain': 'src/integrations/langchain.ts',
  cli: 'src/cli/main.ts',
};

export default defineConfig({
  entry: entries,
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  splitting: true,
  treeshake: true,
});
