import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { measureSideBySide, type InProcessBenchmark } from '../lib/timing.js';
import { removeTree } from '../lib/workspace.js';

/** The bin as the package ships it, built with the project's tsup configuration (chunks split) by `npm run bench`. */
const bin = fileURLToPath(new URL('../../.bench-work/dist/cli.js', import.meta.url));

/**
 * How long `rewindable` takes to start: `--version` (the command list only)
 * and `sessions` on an empty store (one command's modules: the library, the
 * store, zod), each a fresh Node process, against `node -e 0`, the least a
 * Node program can take.
 */
export const cliStartup: Scenario = {
  id: 'cli-startup',
  summary: 'rewindable --version and rewindable sessions (empty store), each a new process, vs node -e 0',
  async run(context) {
    if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: run the benchmarks with npm run bench, which builds the package first.`);
    const samples = context.quick ? 6 : 30;
    const directory = context.workspace.directory('cli-startup');
    const project = context.workspace.directory('cli-startup', 'project');
    const environment = { ...process.env, REWINDABLE_HOME: path.join(directory, 'store'), NO_COLOR: '1' };
    const spawned = (args: string[]): InProcessBenchmark<unknown> => ({
      samples,
      prepare: () => undefined,
      run: () => {
        const child = spawnSync(process.execPath, args, { cwd: project, env: environment, stdio: 'ignore' });
        if (child.status !== 0) throw new Error(`node ${args.join(' ')} exited with ${child.status}`);
      },
    });
    try {
      context.log(`cli-startup: ${samples} runs of each`);
      const timings = await measureSideBySide({ node: spawned(['-e', '0']), version: spawned([bin, '--version']), sessions: spawned([bin, 'sessions']) }, 3);
      const node = { name: 'node -e 0', value: timings.node.medianMs, unit: 'ms' as const, samples: timings.node.samples };
      const rows: Row[] = [
        {
          label: 'rewindable --version',
          rewindable: { name: 'node dist/cli.js --version', value: timings.version.medianMs, unit: 'ms', samples: timings.version.samples },
          baseline: node,
          // --version loads the entry and the command list and no command: what is left above Node's own start-up
          // is reading a few kilobytes of JavaScript. Twice `node -e 0` allows for that and for a loaded machine,
          // and fails as soon as --version loads the library again (three to five times `node -e 0`).
          target: { kind: 'ratio-at-most', value: 2 },
        },
        {
          label: 'rewindable sessions (empty store)',
          rewindable: { name: 'node dist/cli.js sessions', value: timings.sessions.medianMs, unit: 'ms', samples: timings.sessions.samples },
          baseline: node,
          note: 'loads the command, the library and zod',
        },
      ];
      const report: ScenarioReport = {
        id: 'cli-startup',
        title: 'CLI start-up',
        method: [
          `Each sample starts a new Node process with \`spawnSync\` and waits for it to end: \`node -e 0\`, the built bin's \`--version\`, and its \`sessions\` ` +
            `in an empty project directory with an empty store. ${samples} samples each, taken in three blocks alternating between the three.`,
          'The bin is the package build (tsup, chunks split), so a command loads only its own modules.',
        ],
        rows,
      };
      return [report];
    } finally {
      removeTree(directory);
    }
  },
};
