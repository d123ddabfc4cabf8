/**
 * `npm run demo`: a scripted agent session on a temporary project, with a
 * temporary store ($REWINDABLE_HOME if set). User messages are recorded (each takes a checkpoint),
 * the agent edits files through the built-in tools, a shell command's changes
 * are captured, then a dry run previews a rewind, the rewind restores the
 * files and the conversation, the rewind itself is undone, and one turn is
 * reverted alone while a later turn's changes stay. Everything is
 * removed at the end; `npm run demo -- --keep` keeps the project and its
 * session, and prints the `rewindable` commands that show them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckpointManager, encodeProjectKey, filesystemStorage, type RewindFilesReady, type TranscriptMessage } from '../src/index.js';

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = (text: string) => (color ? `\x1b[1m${text}\x1b[0m` : text);
const dim = (text: string) => (color ? `\x1b[2m${text}\x1b[0m` : text);
const say = (text = '') => console.log(text);

const keep = process.argv.includes('--keep');
const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-demo-')));
const ownStore = !process.env.REWINDABLE_HOME;
const storeDir = ownStore ? fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-demo-store-')) : path.resolve(process.env.REWINDABLE_HOME!);
const show = (file: string) => path.relative(project, file);
const tree = () =>
  (fs.readdirSync(project, { recursive: true }) as string[])
    .filter((name) => fs.statSync(path.join(project, name)).isFile())
    .sort()
    .map((name) => `    ${name.padEnd(20)} ${dim(JSON.stringify(fs.readFileSync(path.join(project, name), 'utf8')))}`)
    .join('\n');
const printRewind = (result: RewindFilesReady) => {
  for (const file of result.files) say(`    ${file.action.padEnd(8)} ${show(file.path).padEnd(20)} +${file.insertions} -${file.deletions}`);
  say(`    ${result.filesChanged.length} files, +${result.insertions} -${result.deletions}, ${result.skippedLinks} refused`);
};
const printConversation = (messages: TranscriptMessage[]) => {
  for (const message of messages) say(`    ${message.type.padEnd(9)} ${JSON.stringify(message.message)}`);
  if (messages.length === 0) say('    (empty)');
};

fs.mkdirSync(path.join(project, 'src'));
fs.writeFileSync(path.join(project, 'src/greet.ts'), 'export function greet(name: string) {\n  return `Hello, ${name}`;\n}\n');
fs.writeFileSync(path.join(project, 'README.md'), '# demo\n');

say(bold('rewindable demo'));
say(`  project: ${project}`);
say(`  store:   ${storeDir}${ownStore ? ' (temporary; set REWINDABLE_HOME to use another)' : ''}`);
say();
say(bold('Files at the start'));
say(tree());

const manager = await CheckpointManager.open({ cwd: project, storeDir });
say(`  session: ${manager.sessionId}`);

// Turn 1: a user message arrives; recording it takes its checkpoint.
const first = await manager.recordUserMessage('Add a farewell and a test.');
say();
say(bold(`Turn 1, user message ${first.uuid}: "Add a farewell and a test."`));
let result: { message: string } = await manager.tools.edit({
  file_path: 'src/greet.ts',
  old_string: '  return `Hello, ${name}`;\n}\n',
  new_string: '  return `Hello, ${name}!`;\n}\n\nexport function farewell(name: string) {\n  return `Bye, ${name}`;\n}\n',
});
say(`  Edit   ${result.message}`);
result = await manager.tools.write({ file_path: 'test/greet.test.ts', content: "import { greet } from '../src/greet';\n\nconsole.assert(greet('a') === 'Hello, a!');\n" });
say(`  Write  ${result.message}`);
await manager.recordMessage({ type: 'assistant', message: 'Added farewell() and a test.' });

// Turn 2: the agent goes the wrong way, with a tool and with a shell command.
const second = await manager.recordUserMessage('Now rename everything.');
say();
say(bold(`Turn 2, user message ${second.uuid}: "Now rename everything."`));
result = await manager.tools.write({ file_path: 'src/greet.ts', content: 'export const hi = (n: string) => `Hi ${n}`;\n' });
say(`  Write  ${result.message}`);
const shell = await manager.captureChanges(() => fs.rmSync(path.join(project, 'README.md')), { label: 'rm README.md' });
say(`  Bash   rm README.md  (captured: deleted ${shell.changes.deleted.map(show).join(', ')})`);
await manager.recordMessage({ type: 'assistant', message: 'Renamed greet() to hi() and removed the README.' });
say();
say(bold('Files now'));
say(tree());
say();
say(bold('Conversation now'));
printConversation(await manager.getTranscript());

say();
say(bold('Checkpoints'));
for (const checkpoint of await manager.listCheckpoints()) {
  say(`    ${checkpoint.id}  ${checkpoint.createdAt}  ${checkpoint.files.map(show).join(', ') || '(no files yet)'}`);
}

say();
say(bold('Dry run: rewind files and conversation to before turn 1'));
const preview = await manager.rewind(first.uuid, { dryRun: true });
printRewind(preview.files!);
say(`    status: ${preview.status}; nothing on disk or in the conversation changed`);
await manager.close();

// A new manager, as a new process would, resumes the session from disk and rewinds there.
const resumed = await CheckpointManager.open({ cwd: project, storeDir, session: { resume: manager.sessionId } });
say();
say(bold('Rewind to before turn 2, files only (in a resumed session)'));
const filesOnly = await resumed.rewind(second.uuid, { scope: 'files' });
printRewind(filesOnly.files!);
say();
say(bold('Rewind to before turn 1, files and conversation'));
const both = await resumed.rewind(first.uuid, { scope: 'both' });
printRewind(both.files!);
say(`    status: ${both.status}; conversation now:`);
printConversation(both.conversation!.messages);
say(`    (the rewound prompt, to offer for editing: ${JSON.stringify(both.conversation!.rewoundMessage.message)})`);
say();
say(bold('Files after the rewind'));
say(tree());

say();
say(bold(`Undo the last rewind (checkpoint ${both.files!.undoCheckpointId!}, taken just before it)`));
printRewind(await resumed.rewindFiles(both.files!.undoCheckpointId!));
say(tree());
const [oldBranch] = await resumed.listBranches();
say(`    the conversation's old branch is still readable: ${oldBranch!.length} messages, ending with ${JSON.stringify((await resumed.getTranscript({ leafUuid: oldBranch!.leafUuid })).at(-1)!.message)}`);

// Turn 3 builds on turn 1's files; then turn 1 alone is reverted, and turn 3's changes stay.
const third = await resumed.recordUserMessage('Document the module.');
say();
say(bold(`Turn 3, user message ${third.uuid}: "Document the module."`));
result = await resumed.tools.edit({ file_path: 'src/greet.ts', old_string: 'export function greet', new_string: '// Greetings for the demo.\n\nexport function greet' });
say(`  Edit   ${result.message}`);
result = await resumed.tools.edit({ file_path: 'README.md', old_string: '# demo\n', new_string: '# demo\n\nSays hello.\n' });
say(`  Edit   ${result.message}`);
say();
say(bold('Revert turn 1 only: its changes go, turn 3\'s stay (a three-way merge per file)'));
const revert = await resumed.revertTurn(first.uuid);
for (const file of revert.files) say(`    ${file.action.padEnd(8)} ${show(file.path).padEnd(20)} +${file.insertions} -${file.deletions}${file.merge ? `  (merged: ${file.merge.status})` : ''}`);
say(`    ${revert.filesChanged.length} files, +${revert.insertions} -${revert.deletions}, ${revert.conflicts.length} conflicts; undo with checkpoint ${revert.undoCheckpointId}`);
say(tree());
await resumed.close();

if (keep) {
  const cli = `npx rewindable --store ${storeDir}`;
  say();
  say(bold('Kept the project and its session. Look at them with the CLI:'));
  say(`  cd ${project}`);
  say(`  ${cli} sessions`);
  say(`  ${cli} checkpoints ${manager.sessionId}`);
  say(`  ${cli} diff ${manager.sessionId} ${first.uuid}`);
  say(`  ${cli} rewind ${manager.sessionId} ${second.uuid} --dry-run`);
  say(`  ${cli} revert ${manager.sessionId} ${first.uuid} --dry-run`);
} else {
  // Leave no trace: remove the demo project and its session from the store.
  const storage = filesystemStorage({ directory: storeDir });
  await storage.delete({ projectKey: encodeProjectKey(project), sessionId: manager.sessionId });
  await storage.close();
  fs.rmSync(ownStore ? storeDir : path.join(storeDir, 'projects', encodeProjectKey(project)), { recursive: true, force: true });
  fs.rmSync(project, { recursive: true, force: true });
  say();
  say('Done. The demo project and its session were removed (`npm run demo -- --keep` keeps them, to try the CLI on).');
}
