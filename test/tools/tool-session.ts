import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { CheckpointManagerOptions } from '../../src/index.js';
import { newId, snapshotTree, tempProject, type TempProject } from '../helpers/temp-project.js';

/** A project with an open manager and a first checkpoint, ready for tool calls. */
export async function toolSession(files: Record<string, string | Buffer> = {}, options: Partial<CheckpointManagerOptions> = {}) {
  const project = tempProject();
  for (const [name, content] of Object.entries(files)) project.write(name, content);
  const manager = await project.open(options);
  const turn = await manager.checkpoint(newId());
  return { project, manager, turn };
}

/** Every record of every session log in the project's store (the bytes on disk, parsed). */
export function storedRecords(project: TempProject): Array<Record<string, unknown>> {
  const records: Array<Record<string, unknown>> = [];
  const walk = (directory: string) => {
    if (!fs.existsSync(directory)) return;
    for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
      const full = path.join(directory, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.jsonl')) {
        for (const line of fs.readFileSync(full, 'utf8').split('\n')) if (line !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      }
    }
  };
  walk(path.join(project.store, 'projects'));
  return records;
}

/** Paths (as stored: relative to the project) that have a `track` record. */
export function trackedPaths(project: TempProject): string[] {
  return storedRecords(project)
    .filter((record) => record.type === 'track')
    .map((record) => String(record.path));
}

/** Runs `action`, which must fail, checks that no file or directory of the project changed, and returns the error. */
export async function failsWithoutChanges(project: TempProject, action: () => Promise<unknown>): Promise<unknown> {
  const before = snapshotTree(project.root);
  const outcome = await action().then(
    (value: unknown) => ({ failed: false, value }),
    (error: unknown) => ({ failed: true, value: error }),
  );
  expect(outcome.failed, 'the tool call should have failed').toBe(true);
  expect(snapshotTree(project.root)).toEqual(before);
  return outcome.value;
}

export { newId, snapshotTree };
