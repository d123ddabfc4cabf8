import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds each of the slowest test files took in a full run on a 2-core
 * machine with two workers, other jobs running too (the order is what
 * counts). The suite is over when its last file is: a two-minute file
 * started last keeps one worker busy while the other idles, so these files
 * start first, longest first, and the short ones fill in around them.
 * Vitest's own ordering reads durations from a cache under node_modules,
 * which a fresh clone lacks and a partial run overwrites. Refresh these
 * figures when a file moves well up or down the list.
 */
const measuredSeconds: Record<string, number> = {
  'test/durability/crash-consistency.test.ts': 148,
  'test/package.test.ts': 104,
  'test/hooks/hook-server.test.ts': 65,
  'test/capture/journal-property.test.ts': 57,
  'test/readme-examples.test.ts': 47,
  'test/durability/model-based.test.ts': 26,
  'test/durability/tool-crashes.test.ts': 24,
  'test/package/pack-from-clone.test.ts': 23,
  'test/examples.test.ts': 22,
  'test/hooks/early-scan.test.ts': 19,
  'test/cli/conventions.test.ts': 18,
  'test/cli/rewind.test.ts': 18,
  'test/hooks/hook-command.test.ts': 18,
  'test/cli/revert.test.ts': 16,
  'test/durability/fault-injection.test.ts': 16,
  'test/store/mirror-postgres.test.ts': 15,
  'test/fs/replace-many.test.ts': 14,
  'test/cli/rewind-hunks.test.ts': 14,
  'test/rewind/selective-modes.model.test.ts': 13,
  'test/durability/races.test.ts': 13,
  'test/cli/ids.test.ts': 12,
};

/** Vitest's order, with the files measured above moved to the front, slowest first. */
export class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (file: TestSpecification) => measuredSeconds[path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join('/')] ?? 0;
    // Array sort is stable: the files not measured keep Vitest's order among themselves.
    return (await super.sort(files)).sort((a, b) => seconds(b) - seconds(a));
  }
}
