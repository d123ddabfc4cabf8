import { defineConfig } from 'tsup';

/** One entry per public subpath (see `exports` in package.json). */
export const entries = {
  index: 'src/index.ts',
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
