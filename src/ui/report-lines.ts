import { Writable } from 'node:stream';
import type { Invocation } from '../cli/command.js';
import { Output } from '../cli/output.js';
import { printPlan, toOutput, type RewindWording } from '../cli/rewind-report.js';
import type { Terminal } from '../cli/terminal.js';
import type { RewindResult } from '../conversation/rewind-result.js';
import type { RewindFilesReady } from '../rewind/result.js';
import type { RewindConflictChoice } from '../rewind/rewind-choice.js';

/**
 * The lines `rewindable rewind` prints after a real rewind, without
 * colours: the page shows a result in the very words of the CLI, so what a
 * user learns in one reads the same in the other.
 */
export function rewindReportLines(result: RewindResult, at: { sessionId: string; checkpointId: string; kind: 'message' | 'undo point'; cwd: string }): string[] {
  return captured(at.cwd, (invocation) => {
    const { out } = invocation;
    const where = `${at.kind} ${at.checkpointId}`;
    const files = result.files;
    if (files !== undefined) {
      const wording = { verb: 'rewind', past: 'rewound', subject: `A rewind to ${where}`, cannot: `cannot be put back as at ${where}`, nothing: `the files already match ${where}`, done: `Files rewound to state at ${where}` } as const;
      printRun(invocation, files, { ...at }, wording, 'overwrite');
    }
    if (result.conversation !== undefined) {
      if (files !== undefined) out.line();
      const shown = result.conversation.messages.length;
      out.line(`Conversation rewound to just before message ${at.checkpointId}: ${shown === 1 ? '1 message' : `${shown} messages`} left on the active branch; the old branch stays readable.`);
    }
  });
}

/**
 * The lines `rewindable rewind --path/--hunk` or `rewindable revert` print:
 * before a real run (`result.dryRun`), what it would change; after one, what
 * it changed and how to undo it.
 */
export function planReportLines(result: RewindFilesReady, at: { sessionId: string; checkpointId: string; cwd: string }, wording: RewindWording, onConflict: RewindConflictChoice): string[] {
  return captured(at.cwd, (invocation) => {
    if (!result.dryRun) return printRun(invocation, result, at, wording, onConflict);
    const fields = { sessionId: at.sessionId, checkpointId: at.checkpointId, cwd: at.cwd, rewound: false, notRewoundBecause: 'dry-run' } as const;
    printPlan(invocation, toOutput(fields, result), wording, onConflict);
  });
}

/** A real run as the CLI reports it: the first line, the undo point, then the table of what changed. */
function printRun(invocation: Invocation, files: RewindFilesReady, at: { sessionId: string; checkpointId: string; cwd: string }, wording: RewindWording, onConflict: RewindConflictChoice): void {
  const { out } = invocation;
  out.line(wording.done);
  if (files.undoCheckpointId !== undefined) {
    out.line(`Undo checkpoint: ${files.undoCheckpointId}`);
    out.line(`To undo: rewindable rewind ${at.sessionId} ${files.undoCheckpointId}`);
  }
  out.line();
  const fields = { sessionId: at.sessionId, checkpointId: at.checkpointId, cwd: at.cwd, rewound: true, ...(files.undoCheckpointId !== undefined ? { undoCheckpointId: files.undoCheckpointId } : {}) };
  printPlan(invocation, toOutput(fields, files), wording, onConflict);
}

/** What `print` writes through the CLI's own output, as lines without colours. */
function captured(cwd: string, print: (invocation: Invocation) => void): string[] {
  let text = '';
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const terminal: Terminal = { stdout, stderr: stdout, stdin: process.stdin, env: { NO_COLOR: '1' }, cwd };
  const out = new Output(terminal);
  print({ terminal, out, positionals: [], values: {}, json: false, storeDir: '' });
  return text.replace(/\n$/, '').split('\n');
}
