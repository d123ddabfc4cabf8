import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const holderScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'session-holder.ts');

export interface SessionHolder {
  pid: number;
  release(): Promise<void>;
}

/** Opens the session in another live process, which keeps it (and its lock) until released. */
export async function holdSession(options: { cwd: string; storeDir: string; sessionId: string }): Promise<SessionHolder> {
  const child = spawn(process.execPath, ['--import', 'tsx', holderScript, JSON.stringify({ cwd: options.cwd, storeDir: options.storeDir, resume: options.sessionId, durability: 'none' })], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('holding\n')) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`the session holder exited (${code}) before holding the session: ${output}`)));
  });
  return {
    pid: child.pid!,
    async release() {
      child.kill();
      await exited;
    },
  };
}
