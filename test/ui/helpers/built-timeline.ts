import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { timelinePage } from '../../../tsup.config.js';
import { buildCli, type BuiltCli } from '../../cli/helpers/built-cli.js';

const repository = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The CLI as built, with the timeline page beside it in `ui/`, as the package lays them out. */
export async function buildCliWithPage(): Promise<BuiltCli> {
  const cli = await buildCli();
  const entry = timelinePage.entry as Record<string, string>;
  await build({
    ...timelinePage,
    entry: Object.fromEntries(Object.entries(entry).map(([name, file]) => [name, path.join(repository, file)])),
    outDir: path.dirname(cli.bin),
    config: false,
    clean: false,
    silent: true,
  });
  return cli;
}

export interface RunningUi {
  url: string;
  child: ChildProcess;
  /** Sends SIGINT and waits for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `rewindable ui` and waits for the address it prints; `env` is added to its environment. */
export function startUi(cli: BuiltCli, args: string[], env: Record<string, string> = {}): Promise<RunningUi> {
  const child = spawn(process.execPath, [cli.bin, 'ui', ...args], { env: { ...process.env, HOME: cli.home, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const url = /(http:\/\/127\.0\.0\.1:\d+\/\S+\/)/.exec(stdout)?.[1];
      if (url !== undefined) {
        resolve({
          url,
          child,
          stop: async () => {
            child.kill('SIGINT');
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`rewindable ui exited with ${code} before printing its address: ${stderr}`)));
  });
}
