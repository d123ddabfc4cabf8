import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CheckpointManager, ScanReport } from '../../src/index.js';
import { newId, tempProject, type TempProject } from '../helpers/temp-project.js';

const runs = Number(process.env.JOURNAL_PROPERTY_RUNS ?? 300);

const directories = ['a', 'b', 'a/c', 'a/c/d'];
const files = ['x', 'y.log', 'a/x', 'a/c/y', 'b/z', 'a/c/d/w'];
const anyPath = fc.constantFrom(...files, ...directories);
const content = fc.oneof(fc.string({ maxLength: 12 }), fc.constant('0123456789abcdef'.repeat(6)));

type Operation =
  | { op: 'write' | 'append'; file: string; text: string }
  | { op: 'rm' | 'chmod' | 'touch-old' | 'racy-rewrite'; file: string; mode?: number }
  | { op: 'rm-r' | 'mkdir-p'; directory: string }
  | { op: 'mv'; from: string; to: string }
  | { op: 'symlink'; file: string; target: string }
  | { op: 'checkpoint' }
  | { op: 'captured'; command: Operation }
  | { op: 'tool-edit'; file: string; text: string }
  | { op: 'rewind'; back: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constantFrom('write' as const, 'append' as const), file: fc.constantFrom(...files), text: content }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('rm' as const, 'touch-old' as const, 'racy-rewrite' as const), file: fc.constantFrom(...files) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('chmod' as const), file: fc.constantFrom(...files), mode: fc.constantFrom(0o644, 0o755, 0o600) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('rm-r' as const, 'mkdir-p' as const), directory: fc.constantFrom(...directories, 'e/f/g') }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('mv' as const), from: anyPath, to: fc.constantFrom(...files, ...directories, 'm', 'a/m', 'e') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('symlink' as const), file: fc.constantFrom(...files, 'l'), target: fc.constantFrom('x', 'a', '../outside', 'missing') }) },
  { weight: 4, arbitrary: fc.constant({ op: 'checkpoint' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('captured' as const),
      command: fc.record({ op: fc.constantFrom('write' as const, 'append' as const), file: fc.constantFrom(...files), text: content }) as fc.Arbitrary<Operation>,
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('rewind' as const), back: fc.nat({ max: 4 }) }) },
  // A tool's edit, backed up first: of an ignored file (`y.log`), it makes a tracked path outside the scope.
  { weight: 1, arbitrary: fc.record({ op: fc.constant('tool-edit' as const), file: fc.constantFrom(...files), text: content }) },
);

/** Runs a shell-like operation; one that fails (a missing source, say) fails alike in both projects. */
function apply(root: string, operation: Operation): void {
  const at = (relative: string) => path.join(root, relative);
  try {
    switch (operation.op) {
      case 'write':
        fs.mkdirSync(path.dirname(at(operation.file)), { recursive: true });
        fs.writeFileSync(at(operation.file), operation.text);
        return;
      case 'append':
        fs.appendFileSync(at(operation.file), operation.text);
        return;
      case 'rm':
        fs.rmSync(at(operation.file));
        return;
      case 'chmod':
        fs.chmodSync(at(operation.file), operation.mode!);
        return;
      case 'touch-old':
        fs.utimesSync(at(operation.file), new Date(2001, 0, 1), new Date(2001, 0, 1));
        return;
      case 'racy-rewrite': {
        // Same size, new bytes, at once: within the racy window of any stat taken just before.
        const bytes = fs.readFileSync(at(operation.file));
        fs.writeFileSync(at(operation.file), Buffer.from(bytes.map((byte) => (byte === 0x41 ? 0x42 : 0x41))));
        return;
      }
      case 'rm-r':
        fs.rmSync(at(operation.directory), { recursive: true });
        return;
      case 'mkdir-p':
        fs.mkdirSync(at(operation.directory), { recursive: true });
        return;
      case 'mv':
        fs.renameSync(at(operation.from), at(operation.to));
        return;
      case 'symlink':
        fs.mkdirSync(path.dirname(at(operation.file)), { recursive: true });
        fs.symlinkSync(operation.target, at(operation.file));
        return;
      default:
        return;
    }
  } catch {
    // the same in both trees
  }
}

/** A report with paths relative to the root, in a stable order: what both managers must agree on. */
function comparable(report: ScanReport | undefined, root: string): unknown {
  const relative = (file: string) => path.relative(root, file);
  const sorted = (list: readonly string[]) => list.map(relative).sort();
  return {
    scanned: report?.scanned,
    firstBackups: report?.firstBackups,
    created: sorted(report?.created ?? []),
    modified: sorted(report?.modified ?? []),
    deleted: sorted(report?.deleted ?? []),
    ignored: sorted(report?.ignored ?? []),
    overCap: sorted((report?.overCap ?? []).map((entry) => entry.path)),
    unreadable: sorted(report?.unreadable ?? []),
  };
}

function filesOf(project: TempProject): Record<string, string> {
  return Object.fromEntries(Object.entries(project.snapshot()).filter(([name]) => !name.endsWith('/')));
}

/** One of the projects the property runs the same steps on, and how its manager checkpoints. */
interface Contender {
  project: TempProject;
  manager: CheckpointManager;
  journal: boolean;
  /** Closed and resumed before each checkpoint and command: its scans start with no index, and look at every tracked path. */
  reopened: boolean;
}

describe('capture journal: property', () => {
  it('records at each checkpoint, journaled or not, what a scan with no index records, and rewinds to the same tree', async () => {
    let journaled = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 4, maxLength: 18 }), async (operations) => {
        const contenders: Contender[] = [];
        for (const [journal, reopened] of [
          [true, false],
          [false, false],
          [false, true],
        ] as const) {
          const project = tempProject();
          // Rules stay as they are: with rules changed in a turn, whether a file found is new is judged by its timestamps
          // against the previous scan's start, which differ between two projects (see track-new-files.ts).
          project.write('.gitignore', '*.log\n');
          project.write('x', 'start\n');
          project.write('a/c/y', 'nested\n');
          project.write('b/z', 'zzz\n');
          contenders.push({ project, manager: await project.open({ capture: { journal, maxFileBytes: 64 } }), journal, reopened });
        }
        const reopenIfAsked = async (contender: Contender) => {
          if (!contender.reopened) return;
          await contender.manager.close();
          contender.manager = await contender.project.open({ resume: contender.manager.sessionId, capture: { journal: false, maxFileBytes: 64 } });
        };
        const agree = (results: unknown[]) => {
          for (const result of results.slice(1)) expect(result).toEqual(results[0]);
        };
        const checkpoints: string[] = [];
        try {
          const first = newId();
          for (const { manager } of contenders) await manager.checkpoint(first);
          checkpoints.push(first);
          for (const step of [...operations, { op: 'checkpoint' } as const]) {
            if (step.op === 'checkpoint') {
              const id = newId();
              for (const contender of contenders) {
                await reopenIfAsked(contender);
                await contender.manager.checkpoint(id);
              }
              checkpoints.push(id);
              if (contenders[0]!.manager.lastScan?.via === 'journal') journaled += 1;
              agree(contenders.map(({ manager, project }) => comparable(manager.lastScan, project.root)));
            } else if (step.op === 'captured') {
              // A shell command run through captureChanges: every manager must report the same changes.
              const reported: unknown[] = [];
              for (const contender of contenders) {
                await reopenIfAsked(contender);
                const { changes } = await contender.manager.captureChanges(() => apply(contender.project.root, step.command));
                const relative = (list: readonly string[]) => list.map((file) => path.relative(contender.project.root, file)).sort();
                reported.push({ created: relative(changes.created), modified: relative(changes.modified), deleted: relative(changes.deleted) });
              }
              agree(reported);
            } else if (step.op === 'tool-edit') {
              const outcomes: string[] = [];
              for (const { manager, project } of contenders) {
                const file = project.file(step.file);
                outcomes.push(
                  await manager.trackEdit(file).then(
                    () => 'ok',
                    (error: { code?: string }) => String(error.code),
                  ),
                );
                apply(project.root, { op: 'write', file: step.file, text: step.text });
              }
              agree(outcomes);
            } else if (step.op === 'rewind') {
              const target = checkpoints[Math.max(0, checkpoints.length - 1 - step.back)]!;
              const outcomes: string[] = [];
              for (const { manager } of contenders) {
                outcomes.push(
                  await manager.rewindFiles(target).then(
                    () => 'ok',
                    (error: { code?: string }) => String(error.code),
                  ),
                );
              }
              agree(outcomes);
              agree(contenders.map(({ project }) => filesOf(project)));
            } else {
              for (const { project } of contenders) apply(project.root, step);
            }
          }
        } finally {
          for (const { manager } of contenders) await manager.close();
          for (const { project } of contenders) fs.rmSync(path.dirname(project.root), { recursive: true, force: true });
        }
      }),
      {
        numRuns: runs,
        // A failure prints its seed and path: JOURNAL_PROPERTY_SEED=<seed> JOURNAL_PROPERTY_PATH=<path> replays it.
        ...(process.env.JOURNAL_PROPERTY_SEED !== undefined ? { seed: Number(process.env.JOURNAL_PROPERTY_SEED), path: process.env.JOURNAL_PROPERTY_PATH } : {}),
      },
    );
    expect(journaled).toBeGreaterThan(0);
  }, 600_000);
});
