/**
 * Child process for the crash test. Plays the crash scenario (or reopens the
 * session) and SIGKILLs itself just before the Nth filesystem call the
 * library makes, so every kill point is exact and repeatable. Only calls made
 * while a library call is running are counted; the agent's own writes are not.
 *
 * Usage: node crash-session.mjs '<CrashWorkerConfig as JSON>'
 */
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../../../src/index.js';
import { filesystemStorage } from '../../../src/store/filesystem/filesystem-storage.js';
import { checkpointIds, looseBlobMinBytes, scenarioSteps, type CrashWorkerConfig, type StepReport } from '../helpers/crash-scenario.js';
import { instrumentFs, mutatingCalls } from '../helpers/fs-instrument.js';
import { projectFiles } from '../helpers/sandbox.js';

const config = JSON.parse(process.argv[2]!) as CrashWorkerConfig;
let counting = false;
let calls = 0;
/** The step being played, and the calls counted before it (`killInStep` counts from there). */
let current = -1;
let callsBeforeStep = 0;
const inKillStep = () => config.killInStep === undefined || current === config.killInStep;
const holdsRewindEnd = (data: unknown) =>
  (typeof data === 'string' || data instanceof Uint8Array) && Buffer.from(data as string | Uint8Array).includes('"type":"rewind-end"');
instrumentFs(
  mutatingCalls,
  () => {
    if (!counting) return undefined;
    calls += 1;
    if (inKillStep() && calls - (config.killInStep === undefined ? 0 : callsBeforeStep) === config.killAt) process.kill(process.pid, 'SIGKILL');
    return undefined;
  },
  (_name, args) => {
    if (counting && config.killAfterRewindEnd === true && inKillStep() && args.slice(1).some(holdsRewindEnd)) process.kill(process.pid, 'SIGKILL');
  },
);

async function library<T>(work: () => Promise<T>): Promise<T> {
  counting = true;
  try {
    return await work();
  } finally {
    counting = false;
  }
}

// Stdout is a pipe, and writes to pipes are synchronous on Linux: a report is out before the next kill point.
const report = (value: StepReport | { finished: true; calls: number }) => process.stdout.write(`${JSON.stringify(value)}\n`);

const storage = filesystemStorage({ directory: config.store, durability: config.durability, looseBlobMinBytes });
const options = { cwd: config.root, storage, durability: config.durability };
let manager: CheckpointManager | undefined;
const undoIds = new Map<number, string>();

/**
 * The agent's own write (content) or delete (null) is not under test: written whole (outside the project,
 * then renamed), so a kill at a random moment cannot leave it half-done, as an in-place write cut between
 * truncate and write would.
 */
function writeWhole(relative: string, content: string | null): void {
  const file = path.join(config.root, relative);
  if (content === null) {
    fs.rmSync(file);
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const whole = path.join(path.dirname(config.root), `.agent-write-${process.pid}`);
  fs.writeFileSync(whole, Buffer.from(content, 'latin1'));
  fs.renameSync(whole, file);
}

if (config.mode === 'reopen') {
  manager = await library(() => CheckpointManager.open({ ...options, resume: config.sessionId }));
  await library(async () => {
    await manager!.close();
    await storage.close();
  });
} else {
  for (const [index, step] of scenarioSteps.entries()) {
    [current, callsBeforeStep] = [index, calls];
    const done: StepReport = { step: index, calls: 0 };
    switch (step.do) {
      case 'open':
        manager = await library(() => CheckpointManager.open({ ...options, sessionId: config.sessionId }));
        break;
      case 'checkpoint':
        await library(() => manager!.checkpoint(checkpointIds[step.label]));
        break;
      case 'track':
        await library(() => manager!.trackEdit(step.path));
        writeWhole(step.path, step.content);
        break;
      case 'edit':
        writeWhole(step.path, step.content);
        break;
      case 'record-write':
        await library(() => manager!.recordWrite(step.path, { tool: 'Write' }));
        break;
      case 'rewind':
      case 'rewind-undo': {
        const id = step.do === 'rewind' ? checkpointIds[step.label]! : undoIds.get(step.undoOf)!;
        const choice = step.do === 'rewind' ? { ...(step.paths !== undefined ? { paths: step.paths } : {}), ...(step.merge === true ? { onConflict: 'merge' as const } : {}) } : {};
        const result = await library(() => manager!.rewindFiles(id, choice));
        undoIds.set(index, result.undoCheckpointId!);
        done.undoCheckpointId = result.undoCheckpointId!;
        break;
      }
      case 'revert-turn': {
        const result = await library(() => manager!.revertTurn(checkpointIds[step.label]!));
        done.undoCheckpointId = result.undoCheckpointId!;
        break;
      }
      case 'close':
        await library(async () => {
          await manager!.close();
          await storage.close();
        });
        break;
    }
    done.calls = calls;
    if (config.reportFiles === true) done.files = projectFiles(config.root);
    report(done);
  }
}
report({ finished: true, calls });
