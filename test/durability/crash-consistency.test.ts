import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CheckpointManager, RewindableError } from '../../src/index.js';
import { bundledWorker } from './helpers/bundle.js';
import { forEachLimited, runChild, type ChildOutcome } from './helpers/child-process.js';
import {
  checkpointIds,
  expectedFilesAfterEachStep,
  originalFiles,
  scenarioSteps,
  type CrashWorkerConfig,
  type StepReport,
} from './helpers/crash-scenario.js';
import { createSandbox, readLogRecords, type Sandbox } from './helpers/sandbox.js';

/**
 * Crash consistency. A child process plays a session of tracked edits and
 * three multi-file rewinds (crash-scenario.ts) and SIGKILLs itself just
 * before the Nth filesystem call the library makes. After every kill the
 * session is reopened here, and it must open, list a consistent set of
 * checkpoints, hold every file as one whole expected version (an interrupted
 * rewind rolled back as a whole), and rewind to the first checkpoint to
 * exactly the original files.
 */

const expected = expectedFilesAfterEachStep();
const rewindSteps = scenarioSteps.flatMap((step, index) => (step.do === 'rewind' || step.do === 'rewind-undo' ? [index] : []));
let worker: string;
/** Library fs calls counted at the end of each step, from a run without a kill. */
const callsAfterStep: Record<'full' | 'none', number[]> = { full: [], none: [] };

beforeAll(async () => {
  worker = await bundledWorker('crash-session');
  for (const durability of ['full', 'none'] as const) {
    const sandbox = createSandbox();
    try {
      sandbox.writeFiles(originalFiles);
      const run = await runChild(worker, config(sandbox, durability, null));
      expect(run.stderr).toBe('');
      expect(run.lines.at(-1)).toMatchObject({ finished: true });
      callsAfterStep[durability] = reportsOf(run).map((report) => report.calls);
      expect(sandbox.files()).toEqual(expected.at(-1));
    } finally {
      sandbox.dispose();
    }
  }
}, 60_000);

const sessionId = '00000000-0000-4000-8000-00000000c0de';

function config(sandbox: Sandbox, durability: 'full' | 'none', killAt: number | null, mode: CrashWorkerConfig['mode'] = 'scenario'): CrashWorkerConfig {
  return { root: sandbox.root, store: sandbox.store, sessionId, durability, mode, killAt };
}

function reportsOf(run: ChildOutcome): StepReport[] {
  return run.lines.filter((line): line is StepReport & Record<string, unknown> => typeof line.step === 'number');
}

/** Kill points: every call inside `dense` steps, every `stride`-th call elsewhere. */
function killPoints(durability: 'full' | 'none', stride: number, dense: readonly number[] = []): number[] {
  const total = callsAfterStep[durability].at(-1)!;
  const points: number[] = [];
  for (let call = 1; call <= total; call += 1) {
    const step = callsAfterStep[durability].findIndex((calls) => calls >= call);
    if (dense.includes(step) || call % stride === 1) points.push(call);
  }
  return points;
}

/**
 * What must hold after the child died, given the steps it reported finished.
 * `killedAnywhere`: the kill came from outside at a random moment, so it may
 * have landed in the agent's own code rather than in a library call.
 * Returns a description of what was found, for the summary.
 */
async function checkAfterKill(
  sandbox: Sandbox,
  reports: StepReport[],
  context: string,
  killedAnywhere = false,
): Promise<'rolled-back' | 'completed' | 'unchanged' | 'never-created'> {
  const lastDone = reports.at(-1)?.step ?? -1;
  const inFlight = lastDone + 1;
  const rewindsDone = rewindSteps.filter((step) => step <= lastDone).length;
  const records = readLogRecords(sandbox.logPath(sessionId));
  const completedRewinds = records.filter((record) => record.type === 'rewind-end' && record.status === 'complete').length;
  const inFlightRewindCompleted = rewindSteps.includes(inFlight) && completedRewinds === rewindsDone + 1;
  // Verification needs no flushing; the kill already decided what is on disk.
  const options = { cwd: sandbox.root, storeDir: sandbox.store, durability: 'none' as const };
  // A write cut short leaves its temporary file; once old enough, reopening sweeps it.
  const leftovers = sandbox.temporaryFiles();
  for (const name of leftovers) fs.utimesSync(path.join(sandbox.root, name), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

  let manager: CheckpointManager;
  try {
    manager = await CheckpointManager.open({ ...options, resume: sessionId });
  } catch (error) {
    // Killed before the first checkpoint was acknowledged: the session never existed.
    expect(RewindableError.isInstance(error) && error.code, `${context}: ${String(error)}`).toBe('SESSION_NOT_FOUND');
    expect(lastDone, context).toBeLessThan(1);
    expect(sandbox.files(), context).toEqual(originalFiles);
    return 'never-created';
  }
  try {
    expect(sandbox.temporaryFiles(), `${context}: temporary files swept on open`).toEqual([]);
    // The checkpoints are the acknowledged ones, plus at most the one being taken.
    const checkpoints = await manager.listCheckpoints();
    const messageIds = checkpoints.filter((checkpoint) => checkpoint.reason === 'message').map((checkpoint) => checkpoint.id);
    const acknowledged = scenarioSteps.slice(0, inFlight).flatMap((step) => (step.do === 'checkpoint' ? [checkpointIds[step.label]!] : []));
    const inFlightStep = scenarioSteps[inFlight];
    const possible = [acknowledged];
    if (inFlightStep?.do === 'checkpoint') possible.push([...acknowledged, checkpointIds[inFlightStep.label]!]);
    expect(possible, `${context}: checkpoints ${JSON.stringify(messageIds)}`).toContainEqual(messageIds);
    const preRewind = checkpoints.filter((checkpoint) => checkpoint.reason === 'pre-rewind').length;
    expect([rewindsDone, rewindsDone + (rewindSteps.includes(inFlight) ? 1 : 0)], context).toContain(preRewind);
    for (const checkpoint of checkpoints) {
      for (const file of checkpoint.files) expect(file.startsWith(`${sandbox.root}/`), context).toBe(true);
    }

    // Every file is one whole version: the state before the interrupted step, or after it for a rewind that completed.
    const before = expected[lastDone] ?? originalFiles;
    const after = expected[inFlight]!;
    if (killedAnywhere && scenarioSteps[inFlight]?.do === 'track') {
      // A kill from outside can land after the agent's own write but before the step's report went out.
      expect([before, after], context).toContainEqual(sandbox.files());
    } else {
      expect(sandbox.files(), context).toEqual(inFlightRewindCompleted ? after : before);
    }

    if (messageIds.length === 0) return 'unchanged';
    const reopenedState = sandbox.files();
    const toFirst = await manager.rewindFiles(checkpointIds.c1!);
    expect(sandbox.files(), `${context}: rewind to the first checkpoint`).toEqual(originalFiles);
    await manager.rewindFiles(toFirst.undoCheckpointId!);
    expect(sandbox.files(), `${context}: undo of that rewind`).toEqual(reopenedState);
  } finally {
    await manager.close();
  }
  if (!rewindSteps.includes(inFlight)) return 'unchanged';
  return inFlightRewindCompleted ? 'completed' : 'rolled-back';
}

async function killAndCheck(durability: 'full' | 'none', killAt: number | 'after-rewind-end'): Promise<string> {
  const sandbox = createSandbox();
  try {
    sandbox.writeFiles(originalFiles);
    const run = await runChild(
      worker,
      killAt === 'after-rewind-end' ? { ...config(sandbox, durability, null), killAfterRewindEnd: true } : config(sandbox, durability, killAt),
    );
    const context = `durability ${durability}, killed ${killAt === 'after-rewind-end' ? 'right after the first rewind-end record was written' : `before library fs call ${killAt}`}`;
    const finished = run.lines.at(-1);
    if (run.signal === null && typeof killAt === 'number' && finished?.finished === true && typeof finished.calls === 'number' && killAt > finished.calls) {
      // The racy-timestamp rule re-reads a file written moments before a call, so a run can make a call or
      // two fewer than the run that set the kill points: a point past this run's last call was never reached.
      // The run must still have finished whole, a few calls short at most.
      expect(killAt - finished.calls, `${context}: the run made only ${finished.calls} calls`).toBeLessThanOrEqual(pastTheEndSlack);
      expect(sandbox.files(), context).toEqual(expected.at(-1));
      return 'past-the-end';
    }
    expect(run.signal, `${context}: ${run.stderr}`).toBe('SIGKILL');
    return await checkAfterKill(sandbox, reportsOf(run), context);
  } finally {
    sandbox.dispose();
  }
}

/** Calls a run may fall short of the run that set the kill points (see killAndCheck). */
const pastTheEndSlack = 8;

function tally(outcomes: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
  return counts;
}

describe('crash consistency (SIGKILL at deterministic kill points)', () => {
  it('durability full: every call of the first multi-file rewind and of the selective one, every 4th call elsewhere', async () => {
    const selective = scenarioSteps.findIndex((step) => step.do === 'rewind' && step.paths !== undefined);
    const points = killPoints('full', 4, [rewindSteps[0]!, selective]);
    expect(points.length).toBeGreaterThanOrEqual(100);
    const outcomes: string[] = [];
    await forEachLimited(points, 2, async (killAt) => {
      outcomes.push(await killAndCheck('full', killAt));
    });
    // The sweep really interrupted rewinds before they committed; a kill right after the commit is
    // one exact call that the racy window can move, so it is also made by event.
    const counts = tally(outcomes);
    expect(counts['rolled-back']).toBeGreaterThan(10);
    expect(await killAndCheck('full', 'after-rewind-end')).toBe('completed');
    console.info(`crash sweep, durability full: ${points.length} kill points`, counts);
  }, 240_000);

  it('durability none survives a killed process the same way', async () => {
    const points = killPoints('none', 12);
    expect(points.length).toBeGreaterThanOrEqual(15);
    const outcomes: string[] = [];
    await forEachLimited(points, 2, async (killAt) => {
      outcomes.push(await killAndCheck('none', killAt));
    });
    // A sweep whose kills all land between steps, or past the end, proves nothing about rollback. Of 18
    // points, 11 land inside a rewind; the racy rule can move a point by a call or two, hence the margin.
    const counts = tally(outcomes);
    expect(counts['rolled-back'] ?? 0).toBeGreaterThanOrEqual(6);
    expect(counts['past-the-end'] ?? 0).toBeLessThanOrEqual(1);
    console.info(`crash sweep, durability none: ${points.length} kill points`, counts);
  }, 120_000);

  it('a crash while reopening recovers a crashed rewind (kill during the rollback), at every other call of the recovery', async () => {
    const first = rewindSteps[0]!;
    const [start, end] = [callsAfterStep.full[first - 1]!, callsAfterStep.full[first]!];
    const firstKill = start + Math.round((end - start) * 0.6); // among the rewind's file writes
    const sandbox = createSandbox();
    const golden = `${sandbox.base}.golden`;
    try {
      sandbox.writeFiles(originalFiles);
      const crashed = await runChild(worker, config(sandbox, 'full', firstKill));
      expect(crashed.signal).toBe('SIGKILL');
      fs.cpSync(sandbox.base, golden, { recursive: true });
      const restore = () => {
        fs.rmSync(sandbox.base, { recursive: true, force: true });
        fs.cpSync(golden, sandbox.base, { recursive: true });
      };
      const reference = await runChild(worker, config(sandbox, 'full', null, 'reopen'));
      expect(reference.lines.at(-1)).toMatchObject({ finished: true });
      const recoveryCalls = reference.lines.at(-1)!.calls as number;
      expect(recoveryCalls).toBeGreaterThan(10);
      let runs = 0;
      for (let killAt = 1; killAt <= recoveryCalls; killAt += 2) {
        runs += 1;
        restore();
        const run = await runChild(worker, config(sandbox, 'full', killAt, 'reopen'));
        const context = `first killed before call ${firstKill}, then the reopening killed before call ${killAt}`;
        expect(run.signal, context).toBe('SIGKILL');
        expect(await checkAfterKill(sandbox, reportsOf(crashed), context), context).toBe('rolled-back');
      }
      console.info(`nested crash sweep: ${runs} kill points among the recovery's ${recoveryCalls} calls`);
    } finally {
      sandbox.dispose();
      fs.rmSync(golden, { recursive: true, force: true });
    }
  }, 120_000);

  it('a few kills at random moments (time-based, delays printed on failure)', async () => {
    const delays = Array.from({ length: 6 }, () => 150 + Math.floor(Math.random() * 450));
    await forEachLimited(delays, 2, async (delay) => {
      const sandbox = createSandbox();
      try {
        sandbox.writeFiles(originalFiles);
        const run = await runChild(worker, config(sandbox, 'full', null), { killAfterMs: delay });
        await checkAfterKill(sandbox, reportsOf(run), `killed by the test after ${delay} ms (${run.signal ?? 'finished first'})`, true);
      } finally {
        sandbox.dispose();
      }
    });
  }, 60_000);
});
