import fs from 'node:fs';
import type { CheckpointManager } from '../../src/index.js';
import type { TempProject } from './temp-project.js';

/** A tool's write, as the built-in tools make it: tracked first, then written and recorded (call id `call-<file>-<length>`). */
export async function toolWrite(manager: CheckpointManager, project: TempProject, file: string, content: string): Promise<void> {
  await manager.trackEdit(file);
  project.write(file, content);
  await manager.recordWrite(file, { tool: 'Write', toolCallId: `call-${file}-${content.length}` });
}

/** A tool's deletion, tracked and recorded the same way. */
export async function toolDelete(manager: CheckpointManager, project: TempProject, file: string): Promise<void> {
  await manager.trackEdit(file);
  fs.rmSync(project.file(file));
  await manager.recordWrite(file);
}
