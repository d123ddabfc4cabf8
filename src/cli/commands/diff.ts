import path from 'node:path';
import { isInside } from '../../paths.js';
import type { FileChangeDiff, FileDiff } from '../../diff/diff-files.js';
import { gitQuotedPath } from '../../text/git-patch.js';
import { flagValue, stringValue, type Command, type Invocation } from '../command.js';
import { namesSession } from '../find-session.js';
import { ExitCode } from '../exit-codes.js';
import { displayPath, formatBytes, plural } from '../format.js';
import { idsParagraph, projectOption, resolveCheckpoint, resolveTarget, withManager } from '../open-manager.js';
import { diffOutputSchema, type DiffOutput } from '../output-schemas.js';
import type { Output } from '../output.js';
import { createProgress } from '../progress.js';

export const diffCommand: Command = {
  name: 'diff',
  description:
    'Shows, file by file, what rewinding the session to CHECKPOINT would change: a unified diff from the file ' +
    'as it is now (a/) to the file at the checkpoint (b/). Lines marked + are what a rewind puts back, lines ' +
    'marked - what it removes. The output is what git diff prints, so git apply applies it. Binary files ' +
    'are shown as "Binary files a/x and b/x differ", which git apply refuses, as git does; --binary writes a GIT binary patch instead. ' +
    'Files over 1 MiB and diffs too costly to compute are listed without a patch; files a rewind would refuse to touch are listed with the reason.\n\n' +
    `${idsParagraph} With two words or more, the first is SESSION when a session id of the store starts with it.\n\n` +
    'On a terminal, each @@ line ends with its hunk id, as in (hunk 76db366af71a-0): rewindable rewind --hunk ID rewinds only that hunk. ' +
    'Into a pipe or a file the patch stays as git prints it, unless --hunk-ids asks for the ids; --json always has them.\n\n' +
    'FILE limits the diff to those files (a directory selects the tracked files under it). FILE is relative ' +
    'to the current directory when it is inside the project, else to the project root. Nothing is written; ' +
    'the session may be open in another process.',
  positionals: { optional: ['SESSION'], required: ['CHECKPOINT'], repeated: 'FILE' },
  options: {
    cwd: projectOption,
    binary: { type: 'boolean', description: 'Give binary files a GIT binary patch that git apply applies, as git diff --binary does.' },
    'hunk-ids': { type: 'boolean', description: 'End each @@ line with its hunk id even when stdout is not a terminal (git apply still applies the patch).' },
    progress: { type: 'boolean', description: 'Report progress on stderr even when it is not a terminal.' },
  },
  examples: [
    'rewindable diff SESSION CHECKPOINT',
    'rewindable diff CHECKPOINT src/app.ts',
    'rewindable diff 5d3b 9f1e --binary | git apply',
    'rewindable diff 5d3b 9f1e --hunk-ids | less -R',
    'rewindable diff SESSION CHECKPOINT --json | jq .files[].path',
  ],
  async run(invocation) {
    const { session, checkpoint, files } = await splitPositionals(invocation);
    const progress = createProgress(invocation.terminal, flagValue(invocation, 'progress') || invocation.terminal.stderr.isTTY === true);
    const target = await resolveTarget(invocation, { ...(session !== undefined ? { session } : {}), checkpoint }, 'diff');
    const output = await withManager(invocation, target, { readOnly: true, command: 'diff' }, async (manager): Promise<DiffOutput> => {
      const checkpointId = await resolveCheckpoint(manager, target.checkpoint, 'diff');
      const cwd = invocation.terminal.cwd;
      const base = cwd === manager.root || isInside(cwd, manager.root) ? cwd : manager.root;
      const diffs = await manager
        .diffFiles(checkpointId, {
          ...(files.length > 0 ? { paths: files.map((file) => path.resolve(base, file)) } : {}),
          binary: flagValue(invocation, 'binary'),
          onProgress: ({ done, total }) => progress.update(`Comparing files: ${done}/${total}`),
        })
        .finally(() => progress.done());
      const changes = diffs.filter((diff): diff is FileChangeDiff => diff.action !== 'skip');
      return {
        sessionId: manager.sessionId,
        checkpointId,
        cwd: manager.root,
        insertions: changes.reduce((sum, diff) => sum + diff.insertions, 0),
        deletions: changes.reduce((sum, diff) => sum + diff.deletions, 0),
        files: diffs.map(toOutput),
      };
    });
    if (invocation.json) {
      invocation.out.json(diffOutputSchema, output);
      return ExitCode.success;
    }
    // Ids only where people read: a patch piped on (to git apply, to a file) stays exactly what git diff prints.
    const hunkIds = flagValue(invocation, 'hunk-ids') || invocation.terminal.stdout.isTTY === true;
    printDiffs(invocation.out, output, hunkIds);
    return ExitCode.success;
  },
};

/**
 * `[SESSION] CHECKPOINT [FILE...]`: with two words or more, the first is the
 * session when a session of the store (of --cwd) has an id it starts;
 * otherwise the line starts with the checkpoint.
 */
async function splitPositionals(invocation: Invocation): Promise<{ session?: string; checkpoint: string; files: string[] }> {
  const [first, second, ...rest] = invocation.positionals as [string, ...string[]];
  if (second !== undefined) {
    const cwd = stringValue(invocation, 'cwd');
    if (await namesSession(invocation.storeDir, first, cwd !== undefined ? path.resolve(invocation.terminal.cwd, cwd) : undefined)) {
      return { session: first, checkpoint: second, files: rest };
    }
  }
  return { checkpoint: first, files: second !== undefined ? [second, ...rest] : [] };
}

function printDiffs(out: Output, output: DiffOutput, hunkIds: boolean): void {
  const style = out.style;
  const changes = output.files.filter((file) => file.action !== 'skip');
  const skipped = output.files.filter((file) => file.action === 'skip');
  if (output.files.length === 0) {
    out.line(`Nothing to rewind: the files already match checkpoint ${output.checkpointId}.`);
    return;
  }
  for (const file of changes) {
    // Quoted as git quotes names, so a line break in one cannot start a line `git apply` would read.
    const name = gitQuotedPath(displayPath(file.path, output.cwd));
    if (file.conflict) out.line(style.yellow(`# ${name} changed since the agent last wrote it: a rewind discards that edit`));
    if (file.patch !== undefined) {
      const hunks = hunkIds ? (file.hunks ?? []) : [];
      let hunk = 0;
      for (const line of file.patch.replace(/\n$/, '').split('\n')) {
        // A hunk's body lines start with ' ', '+', '-' or a backslash, so a line starting with @@ is the next header. Its id goes
        // after the closing @@, where git puts the function name and git apply reads no further.
        const id = line.startsWith('@@') ? hunks[hunk++]?.id : undefined;
        out.line(colorPatchLine(out, line) + (id !== undefined ? `  ${style.dim(`(hunk ${id})`)}` : ''));
      }
      continue;
    }
    // A comment line only: a `diff --git` header with no patch after it would make `git apply` refuse the whole diff.
    out.line(style.dim(`# no patch for ${name}: ${whyNoPatch(file)}; a rewind would ${file.action} it (+${file.insertions} -${file.deletions})`));
  }
  if (skipped.length > 0) {
    out.line();
    out.line(style.bold(`${plural(skipped.length, 'tracked file')} a rewind would leave alone:`));
    for (const file of skipped) out.line(`  ${style.yellow(displayPath(file.path, output.cwd))}: ${file.message}`);
  }
  out.line();
  out.line(
    `${plural(changes.length, 'file')} would change, ` +
      `${style.green(plural(output.insertions, 'insertion') + '(+)')}, ${style.red(plural(output.deletions, 'deletion') + '(-)')}`,
  );
  if (hunkIds && changes.some((file) => file.hunks !== undefined)) {
    out.line(style.dim(`To rewind only some hunks: rewindable rewind ${output.sessionId} ${output.checkpointId} --hunk ID [--hunk ID]...`));
  }
}

function colorPatchLine(out: Output, line: string): string {
  const style = out.style;
  if (/^(diff --git|index |--- |\+\+\+ |old mode|new mode|new file mode|deleted file mode|Binary files|GIT binary patch)/.test(line)) return style.bold(line);
  if (line.startsWith('@@')) return style.cyan(line);
  if (line.startsWith('+')) return style.green(line);
  if (line.startsWith('-')) return style.red(line);
  if (line.startsWith('\\')) return style.dim(line);
  return line;
}

function whyNoPatch(file: Extract<DiffOutput['files'][number], { action: 'restore' | 'recreate' | 'delete' | 'chmod' }>): string {
  const size = (side: { size: number } | null) => (side === null ? 'absent' : formatBytes(side.size));
  if (file.binary) return `binary file (now ${size(file.current)}, at the checkpoint ${size(file.target)})`;
  if (file.tooLarge) return `too large to diff (now ${size(file.current)}, at the checkpoint ${size(file.target)})`;
  if (file.tooComplex) return 'the line diff was too costly to compute';
  if (file.current !== null && file.target !== null && file.current.mode !== file.target.mode) {
    return `only permission bits git does not record differ (now ${modeText(file.current.mode)}, at the checkpoint ${modeText(file.target.mode)})`;
  }
  return 'no file content on either side';
}

function modeText(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, '0');
}

function toOutput(diff: FileDiff): DiffOutput['files'][number] {
  if (diff.action === 'skip') return { path: diff.path, action: 'skip', reason: diff.reason, message: diff.message };
  return {
    path: diff.path,
    action: diff.action,
    ...(diff.patch !== undefined ? { patch: diff.patch } : {}),
    ...(diff.hunks !== undefined ? { hunks: diff.hunks } : {}),
    insertions: diff.insertions,
    deletions: diff.deletions,
    binary: diff.binary,
    tooLarge: diff.tooLarge,
    tooComplex: diff.tooComplex,
    statsSkipped: diff.statsSkipped,
    conflict: diff.conflict,
    current: diff.current,
    target: diff.target,
  };
}
