/**
 * `npm run demo`: a scripted agent session on a temporary project, using the
 * default local store. It takes checkpoints as user messages arrive, edits
 * files the way an agent's tools would, previews a rewind (dry run) and
 * performs it, then undoes the rewind.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { CheckpointManager, defaultStoreDirectory, encodeProjectKey, filesystemStorage, type RewindFilesResult } from '../src/index.js';

const bold = (text: string) => (process.stdout.isTTY && !process.env.NO_COLOR ? `\x1b[1m${text}\x1b[0m` : text);
const say = (text = '') => console.log(text);

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-demo-')));
const show = (file: string) => path.relative(project, file);
const write = (file: string, content: string) => {
  fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
  fs.writeFileSync(path.join(project, file), content);
};
const tree = () =>
  (fs.readdirSync(project, { recursive: true }) as string[])
    .filter((name) => fs.statSync(path.join(project, name)).isFile())
    .sort()
    .map((name) => `    ${name.padEnd(20)} ${JSON.stringify(fs.readFileSync(path.join(project, name), 'utf8'))}`)
    .join('\n');
const printResult = (result: RewindFilesResult) => {
  for (const file of result.files ?? []) {
    say(`    ${file.action.padEnd(8)} ${show(file.path).padEnd(20)} +${file.insertions} -${file.deletions}`);
  }
  say(`    ${result.filesChanged?.length ?? 0} files, +${result.insertions} -${result.deletions}, ${result.skippedLinks} refused`);
};

write('src/greet.ts', 'export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n');
write('README.md', '# demo\n');

say(bold('rewindable demo'));
say(`  project: ${project}`);
say(`  store:   ${defaultStoreDirectory()} (set REWINDABLE_HOME to change)`);
say();
say(bold('Files at the start'));
say(tree());

const manager = await CheckpointManager.open({ cwd: project });

// Turn 1: the user asks for a feature.
const firstMessage = randomUUID();
await manager.checkpoint(firstMessage);
say();
say(bold(`Turn 1 (user message ${firstMessage.slice(0, 8)}): "add a farewell and a test"`));
await manager.trackEdit('src/greet.ts');
write('src/greet.ts', 'export function greet(name: string) {\n  return `Hello, ${name}!`;\n}\n\nexport function farewell(name: string) {\n  return `Bye, ${name}`;\n}\n');
say('  Edit   src/greet.ts');
await manager.trackEdit('test/greet.test.ts');
write('test/greet.test.ts', "import { greet } from '../src/greet';\n\nconsole.assert(greet('a') === 'Hello, a!');\n");
say('  Write  test/greet.test.ts (new file)');

// Turn 2: the agent goes the wrong way.
const secondMessage = randomUUID();
await manager.checkpoint(secondMessage);
say();
say(bold(`Turn 2 (user message ${secondMessage.slice(0, 8)}): "now rename everything"`));
await manager.trackEdit('src/greet.ts');
write('src/greet.ts', 'export const hi = (n: string) => `Hi ${n}`;\n');
say('  Edit   src/greet.ts');
await manager.trackEdit('README.md');
fs.rmSync(path.join(project, 'README.md'));
say('  Delete README.md');
say();
say(bold('Files now'));
say(tree());

say();
say(bold(`Checkpoints (${(await manager.listCheckpoints()).length})`));
for (const checkpoint of await manager.listCheckpoints()) {
  say(`    ${checkpoint.id}  ${checkpoint.createdAt}  ${checkpoint.files.map(show).join(', ')}`);
}

say();
say(bold('Dry run: rewind to before turn 1'));
const preview = await manager.rewindFiles(firstMessage, { dryRun: true });
printResult(preview);
say('    (a dry run: nothing on disk changed)');

await manager.close();

// A new manager (as a new process would) resumes the session from disk and rewinds.
const resumed = await CheckpointManager.open({ cwd: project, resume: manager.sessionId });
say();
say(bold('Rewind to before turn 1 (in a resumed session)'));
const rewind = await resumed.rewindFiles(firstMessage);
printResult(rewind);
say();
say(bold('Files after the rewind'));
say(tree());

say();
say(bold(`Undo the rewind (checkpoint ${rewind.undoCheckpointId?.slice(0, 8)}, taken just before it)`));
printResult(await resumed.rewindFiles(rewind.undoCheckpointId!));
say(tree());
await resumed.close();

// Leave no trace: remove the demo project and its session from the store.
const storage = filesystemStorage();
await storage.delete({ projectKey: encodeProjectKey(project), sessionId: manager.sessionId });
fs.rmSync(path.join(defaultStoreDirectory(), 'projects', encodeProjectKey(project)), { recursive: true, force: true });
await storage.close();
fs.rmSync(project, { recursive: true, force: true });
say();
say('Done. The demo project and its session were removed.');
