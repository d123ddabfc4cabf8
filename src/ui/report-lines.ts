import { Writable } from 'node:stream';
import type { Invocation } from '../cli/command.js';
import { Output } from '../cli/output.js';
import { printPlan, toOutput } from '../cli/rewind-report.js';
import type { Terminal } from '../cli/terminal.js';
import type { RewindResult } from '../conversation/rewind-result.js';

/**
 * The lines `rewindable rewind` prints after a real rewind, without
 * colours: the page shows a result in the very words of the CLI, so what a
 * user learns in one reads the same in the other.
 */
export function rewindReportLines(result: RewindResult, at: { sessionId: string; checkpointId: string; kind: 'message' | 'undo point'; cwd: string }): string[] {
  let text = '';
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  const terminal: Terminal = { stdout, stderr: stdout, stdin: process.stdin, env: { NO_COLOR: '1' }, cwd: at.cwd };
  const out = new Output(terminal);
  const invocation: Invocation = { terminal, out, positionals: [], values: {}, json: false, storeDir: '' };
  const where = `${at.kind} ${at.checkpointId}`;
  const files = result.files;
  if (files !== undefined) {
    out.line(`Files rewound to state at ${where}`);
    if (files.undoCheckpointId !== undefined) {
      out.line(`Undo checkpoint: ${files.undoCheckpointId}`);
      out.line(`To undo: rewindable rewind ${at.sessionId} ${files.undoCheckpointId}`);
    }
    out.line();
    const wording = { verb: 'rewind', past: 'rewound', subject: `A rewind to ${where}`, cannot: `cannot be put back as at ${where}`, nothing: `the files already match ${where}`, done: '' } as const;
    const fields = { sessionId: at.sessionId, checkpointId: at.checkpointId, cwd: at.cwd, rewound: true, ...(files.undoCheckpointId !== undefined ? { undoCheckpointId: files.undoCheckpointId } : {}) };
    printPlan(invocation, toOutput(fields, files), wording, 'overwrite');
  }
  if (result.conversation !== undefined) {
    if (files !== undefined) out.line();
    const shown = result.conversation.messages.length;
    out.line(`Conversation rewound to just before message ${at.checkpointId}: ${shown === 1 ? '1 message' : `${shown} messages`} left on the active branch; the old branch stays readable.`);
  }
  return text.replace(/\n$/, '').split('\n');
}
