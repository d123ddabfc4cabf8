import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CheckpointManager, CheckpointManagerOptions } from '../../../src/index.js';
import { tempProject, type TempProject } from '../../helpers/temp-project.js';

const notebookFixture = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/notebooks/analysis.ipynb');

export interface AgentProject {
  project: TempProject;
  manager: CheckpointManager;
  /** The project's files before the agent ran (bytes and modes). */
  initial: Record<string, string>;
}

/**
 * A project an agent works on: a CRLF text file, an executable script, a
 * binary file and a Jupyter notebook, with an open manager (its options may
 * depend on the project, for a store in its store directory).
 */
export async function agentProject(options: Partial<CheckpointManagerOptions> | ((project: TempProject) => Partial<CheckpointManagerOptions>) = {}): Promise<AgentProject> {
  const project = tempProject();
  project.write('notes.txt', 'Shopping list\r\n- apples\r\n- pears\r\n');
  project.write('bin/run.sh', '#!/bin/sh\necho run\n', 0o755);
  project.write('logo.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10]));
  project.write('analysis.ipynb', fs.readFileSync(notebookFixture));
  const manager = await project.open(typeof options === 'function' ? options(project) : options);
  return { project, manager, initial: project.snapshot() };
}

/**
 * The files of a snapshot, without directory entries: a rewind restores
 * every file's bytes and mode but may leave directories the agent created,
 * so tests compare files.
 */
export function filesOf(snapshot: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot).filter(([name]) => !name.endsWith('/')));
}
