import fs from 'node:fs';
import { defineConfig, type Options } from 'tsup';

/** One entry per public subpath (see `exports` and `typesVersions` in package.json). */
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
};

/** Worker-thread modules, loaded by path beside the library's code (see `workerModule`): built, never imported. */
export const workers = {
  'workers/replace-worker': 'src/fs/workers/replace-worker.ts',
  'workers/lstat-worker': 'src/fs/workers/lstat-worker.ts',
  'workers/deflate-worker': 'src/store/filesystem/workers/deflate-worker.ts',
};

/** The `rewindable` binary: run by Node from the bin field, so ESM only and no type declarations. */
const cli = { cli: 'src/cli/main.ts' };

/**
 * The timeline page (`rewindable ui`), built for the browser into `dist/ui`, where the server reads it: its
 * script bundled as one module, its style sheet and its HTML copied as they are.
 */
export const timelinePage: Options = {
  entry: { 'ui/timeline-page': 'src/ui/page/timeline-page.ts', 'ui/timeline': 'src/ui/page/timeline.css', 'ui/index': 'src/ui/page/index.html' },
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  splitting: false,
  sourcemap: false,
  dts: false,
  loader: { '.html': 'copy' },
};

const shared: Options = {
  target: 'node20',
  platform: 'node',
  splitting: true,
  treeshake: true,
  // The bundles are not minified, so a stack trace already names readable functions and lines; maps with their
  // sources embedded were two thirds of the package, and maps without them would point at sources it does not ship.
  sourcemap: false,
};

/**
 * Three builds into one directory, run in parallel: ESM (the library and the
 * CLI share its chunks), CommonJS, and the declarations of both (one
 * TypeScript pass). The CommonJS build bundles `uuid`, which is published as
 * ESM only: Node 20.19 can `require()` it, but Jest's CommonJS runtime cannot.
 */
export default defineConfig((overrides) => {
  // Cleaned here, once, rather than by each build: parallel builds cleaning one directory would delete each other's files.
  fs.rmSync(overrides.outDir ?? 'dist', { recursive: true, force: true });
  const builds: Options[] = [
    { ...shared, entry: { ...entries, ...workers, ...cli }, format: 'esm', dts: false },
    {
      ...shared,
      entry: { ...entries, ...workers },
      format: 'cjs',
      dts: false,
      noExternal: ['uuid'],
      // `import('pg')` and `import('fast-glob')` become `require`: Jest's CommonJS runtime cannot run an `import()`.
      esbuildOptions(options) {
        options.supported = { ...options.supported, 'dynamic-import': false };
      },
    },
  ];
  builds.push(timelinePage);
  if (overrides.dts !== false) builds.push({ ...shared, entry: entries, format: ['esm', 'cjs'], dts: { only: true } });
  return builds;
});
