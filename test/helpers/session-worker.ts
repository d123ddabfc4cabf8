/**
 * A child process that drives a session from a script of steps, so tests can
 * resume, kill and race real processes. Usage: node --import tsx session-worker.ts '<json>'
 * Prints one JSON line per step result.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager, type CheckpointManagerOptions } from '../../src/index.js';

type Step =
  | { do: 'checkpoint'; id: string }
  | { do: 'track'; path: string }
  | { do: 'write'; path: string; content: string }
  | { do: 'rewind'; id: string; dryRun?: boolean }
  | { do: 'list' }
  | { do: 'signal'; text: string }
  | { do: 'hang' }
  | { do: 'pause'; ms: number }
  | { do: 'close' }
  | { do: 'edit-loop'; files: string[]; turns: number }
  | { do: 'user-message'; uuid: string; text: string }
  | { do: 'message'; uuid: string; type: string; text: string }
  | { do: 'transcript' };

const { options, steps } = JSON.parse(process.argv[2]!) as { options: CheckpointManagerOptions; steps: Step[] };
const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

try {
  const manager = await CheckpointManager.open(options);
  say({ opened: manager.sessionId });
  for (const step of steps) {
    switch (step.do) {
      case 'checkpoint':
        say({ checkpoint: await manager.checkpoint(step.id) });
        break;
      case 'track':
        await manager.trackEdit(step.path);
        say({ tracked: step.path });
        break;
      case 'write':
        fs.mkdirSync(path.dirname(path.resolve(options.cwd, step.path)), { recursive: true });
        fs.writeFileSync(path.resolve(options.cwd, step.path), step.content);
        break;
      case 'rewind':
        say({ rewind: await manager.rewindFiles(step.id, { dryRun: step.dryRun ?? false }) });
        break;
      case 'list':
        say({ list: await manager.listCheckpoints() });
        break;
      case 'signal':
        say({ signal: step.text });
        break;
      case 'hang':
        setInterval(() => {}, 1 << 30); // a pending promise alone does not keep Node running
        await new Promise(() => {});
        break;
      case 'pause':
        await new Promise((resolve) => setTimeout(resolve, step.ms));
        break;
      case 'close':
        await manager.close();
        say({ closed: true });
        break;
      case 'user-message':
        say({ message: await manager.recordUserMessage({ role: 'user', content: step.text }, { uuid: step.uuid }) });
        break;
      case 'message':
        say({ message: await manager.recordMessage({ type: step.type, uuid: step.uuid, message: { role: step.type, content: step.text } }) });
        break;
      case 'transcript':
        say({ transcript: await manager.getTranscript() });
        break;
      case 'edit-loop':
        for (let turn = 0; turn < step.turns; turn += 1) {
          await manager.checkpoint(crypto.randomUUID());
          for (const file of step.files) {
            await manager.trackEdit(file);
            fs.mkdirSync(path.dirname(path.resolve(options.cwd, file)), { recursive: true });
            fs.writeFileSync(path.resolve(options.cwd, file), `turn ${turn} of ${file}\n`.repeat(turn + 1));
          }
          say({ turn });
        }
        break;
    }
  }
} catch (error) {
  say({ error: { code: (error as { code?: string }).code, message: (error as Error).message } });
  process.exitCode = 1;
}
