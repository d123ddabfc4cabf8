/**
 * Writes the README's CLI section from real runs of the CLI, so the README
 * never shows output the CLI does not print. It records a short scripted
 * agent session in a temp project and store, builds the CLI into a temp
 * directory, runs a few commands from the project directory, and puts their
 * output between the `cli-output` markers of README.md.
 *
 *   npx tsx scripts/capture-cli-output.ts          rewrite the README section
 *   npx tsx scripts/capture-cli-output.ts --check  exit 1 if the README is out of date
 *
 * The undo checkpoint's id, times, temp paths and sizes change from run to
 * run; they are replaced by fixed values so the section is reproducible
 * (test/cli/readme-cli-output.test.ts checks it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckpointManager } from '../src/index.js';
import { buildCli, runCli, type BuiltCli } from '../test/cli/helpers/built-cli.js';

const readmePath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../README.md');
const startMarker = '<!-- cli-output:start -->';
const endMarker = '<!-- cli-output:end -->';

const ids = {
  session: '5d3b8e0c-1a2b-4c3d-8e4f-5a6b7c8d9e0f',
  firstMessage: '3f0c2a8e-6a1b-4c4e-9f3e-2b7d5c1a9e40',
  secondMessage: '8b2d4f6a-0c1e-4a3b-9d5f-7e9a1b3c5d7f',
};
/** Stand-ins, in order of appearance, for ids the run generates (undo checkpoints). */
const generatedIdStandIns = ['c41e7a02-9b3d-4f58-a6e1-0d2f4b6c8e19', 'e7f9a1b3-c5d7-4e9f-8a1b-3c5d7e9f1a2b'];
const shownProject = '/home/me/demo';
const shownStore = '/home/me/.rewindable';
const shownTime = '2025-06-02 14:07:31';
const shownIsoTime = '2025-06-02T14:07:31.000Z';
const shownSize = '2.1 KiB';
const shownBytes = 2150;

/** The README section (markers excluded), from fresh runs of the CLI at `cli`. */
export async function captureCliSection(cli: BuiltCli): Promise<string> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-readme-')));
  const project = path.join(base, 'demo');
  const store = path.join(base, 'store');
  try {
    await recordSession(project, store);
    const transcript: string[] = [];
    const run = async (args: string[]) => {
      const result = await runCli(cli, args, { cwd: project, env: { REWINDABLE_HOME: store } });
      const exit = result.code === 0 ? '' : `(exit code ${result.code})\n`;
      transcript.push(`$ rewindable ${args.join(' ')}\n${result.stdout}${result.stderr}${exit}`);
    };
    await run(['sessions']);
    await run(['checkpoints', ids.session.slice(0, 8)]);
    await run(['diff', ids.firstMessage.slice(0, 8)]);
    await run(['rewind', ids.firstMessage.slice(0, 8)]);
    await run(['rewind', ids.firstMessage.slice(0, 8), '--yes']);
    await run(['sessions', '--json']);
    await run(['gc', '--older-than', '30d', '--yes']);
    return section(normalize(transcript.join('\n').trimEnd(), { project, store }));
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/** Two turns of an agent: the first edits a file and creates one, the second deletes one and changes a mode. */
async function recordSession(project: string, store: string): Promise<void> {
  const write = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    fs.writeFileSync(path.join(project, file), content);
  };
  write('src/greet.ts', 'export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n');
  write('README.md', '# demo\n\nA project an agent works on.\n');
  write('run.sh', 'node src/greet.ts\n');
  const manager = await CheckpointManager.open({ cwd: project, storeDir: store, sessionId: ids.session, durability: 'none' });
  await manager.recordUserMessage('Add a farewell function', { uuid: ids.firstMessage });
  await manager.trackEdit('src/greet.ts');
  write('src/greet.ts', 'export function greet(name: string) {\n  return `Hello, ${name}!`;\n}\n');
  await manager.trackEdit('src/farewell.ts');
  write('src/farewell.ts', 'export const farewell = (name: string) => `Bye, ${name}`;\n');
  await manager.recordUserMessage('Drop the README and make run.sh executable', { uuid: ids.secondMessage });
  await manager.trackEdit('README.md');
  fs.rmSync(path.join(project, 'README.md'));
  await manager.trackEdit('run.sh');
  fs.chmodSync(path.join(project, 'run.sh'), 0o755);
  await manager.close();
}

function normalize(text: string, places: { project: string; store: string }): string {
  const known = new Set(Object.values(ids));
  const standIns = new Map<string, string>();
  return text
    .replaceAll(places.store, shownStore)
    .replaceAll(places.project, shownProject)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (known.has(id)) return id;
      if (!standIns.has(id)) standIns.set(id, generatedIdStandIns[standIns.size] ?? `unexpected-id-${standIns.size}`);
      return standIns.get(id)!;
    })
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/g, shownTime)
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, shownIsoTime)
    .replace(/\b\d+(\.\d)? (B|KiB|MiB|GiB)\b/g, (size) => (size === '0 B' ? size : shownSize))
    .replace(/"bytes": [1-9]\d*/g, `"bytes": ${shownBytes}`)
    .replace(/"bytesFreed": [1-9]\d*/g, `"bytesFreed": ${shownBytes}`);
}

function section(transcript: string): string {
  return [
    '<!-- Written by scripts/capture-cli-output.ts from real runs of the CLI: change the script, not this text. -->',
    '',
    'The `rewindable` command lists, diffs and rewinds sessions without writing code, from a terminal,',
    'an editor or CI. It needs no configuration: it reads the default store (`$REWINDABLE_HOME`, else',
    '`~/.rewindable`) or `--store DIR`, and finds a session\'s project from the session id (`--cwd DIR`',
    'names the project when sessions of that id are in several). A unique start of an id (4 characters or',
    'more) does for the whole id, and a checkpoint id alone finds its session. Every command takes `--help`,',
    'and `--json` for scripts; options may come before the command too. Colours appear only on a terminal',
    '(`NO_COLOR` turns them off, `FORCE_COLOR` on); progress goes to stderr. All',
    'options and JSON shapes: [docs/cli.md](https://github.com/rewindable/rewindable/blob/main/docs/cli.md).',
    '',
    '| exit code | meaning |',
    '|---|---|',
    '| 0 | done (also: a dry run, or nothing to rewind) |',
    '| 1 | the operation failed: unknown session, bad id, locked session, rewind refused, a rewind or gc not confirmed |',
    '| 2 | usage error: unknown command or option, missing argument, an id or id prefix that names several sessions or checkpoints |',
    '',
    `An agent worked two turns in \`${shownProject}\`; from that directory (output captured from the CLI,`,
    'with times, temporary paths, sizes and the undo id replaced by fixed values):',
    '',
    '```console',
    transcript,
    '```',
    '',
    '`rewind` shows what it would do first. On a terminal it then asks `Rewind 4 files? [y/N]`; without a',
    'terminal (as above) it changes nothing and exits with 1 unless `--yes` is given. It refuses while',
    'another process (such as the agent) has the session open; `diff`, `checkpoints` and `rewind --dry-run`',
    'work meanwhile. `gc` previews and asks the same way (`--dry-run` only previews).',
  ].join('\n');
}

export function cliSectionOf(readme: string): string {
  const start = readme.indexOf(startMarker);
  const end = readme.indexOf(endMarker);
  if (start === -1 || end < start) throw new Error(`README.md has no ${startMarker} ... ${endMarker} region`);
  return readme.slice(start + startMarker.length, end).replace(/^\n/, '').replace(/\n$/, '');
}

export function withCliSection(readme: string, content: string): string {
  const start = readme.indexOf(startMarker) + startMarker.length;
  const end = readme.indexOf(endMarker);
  if (start < startMarker.length || end < start) throw new Error(`README.md has no ${startMarker} ... ${endMarker} region`);
  return `${readme.slice(0, start)}\n${content}\n${readme.slice(end)}`;
}

async function main(): Promise<void> {
  const cli = await buildCli();
  try {
    const content = await captureCliSection(cli);
    const readme = fs.readFileSync(readmePath, 'utf8');
    if (process.argv.includes('--check')) {
      if (cliSectionOf(readme) === content) return;
      process.stderr.write('README.md: the CLI section is out of date; run npx tsx scripts/capture-cli-output.ts\n');
      process.exitCode = 1;
      return;
    }
    fs.writeFileSync(readmePath, withCliSection(readme, content));
    process.stdout.write('README.md: CLI section written\n');
  } finally {
    cli.remove();
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
