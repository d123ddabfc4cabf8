import { defineConfig } from 'vitest/config';
import { SlowestFirstSequencer } from './test/slowest-first-sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: on a 2-core CI machine, one file at a time. Most files
    // wait on child processes, fsync and git rather than the processor, so two at a time finish the suite sooner.
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirstSequencer },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
  },
});
