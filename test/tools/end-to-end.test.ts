import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { newId, snapshotTree, toolSession } from './tool-session.js';

const notebook = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/notebooks/analysis.ipynb'));

/**
 * A scripted agent session: three user messages, each followed by tool calls
 * (Write, Edit, NotebookEdit and a wrapped custom tool). Rewinding to each
 * checkpoint, in any order, gives back exactly the files as they were when
 * that message arrived.
 */
describe('tools over three checkpoints, then rewinds', () => {
  it('rewinding to each checkpoint restores the project exactly as it was', async () => {
    const { project, manager } = await toolSession({
      'src/app.ts': 'export const port = 80;\nexport const host = "localhost";\n',
      'docs/win.txt': 'windows\r\nline endings\r\n',
      'notebooks/analysis.ipynb': notebook,
      'untouched.txt': 'never tracked\n',
    });
    const rename = manager.tools.wrap(async (input: { from: string; to: string }) => fs.renameSync(project.file(input.from), project.file(input.to)), {
      paths: (input) => [input.from, input.to],
      tool: 'Rename',
    });
    const turns: Array<{ id: string; snapshot: Record<string, string> }> = [];
    const userMessage = async () => {
      const snapshot = snapshotTree(project.root);
      const id = await manager.checkpoint(newId());
      turns.push({ id, snapshot });
    };

    await userMessage(); // the checkpoint made by toolSession() had no files yet; this one is the first with a baseline
    await manager.tools.edit({ file_path: 'src/app.ts', old_string: 'port = 80', new_string: 'port = 8080' });
    await manager.tools.write({ file_path: 'src/config/defaults.json', content: '{\n  "retries": 3\n}\n' });
    await manager.tools.edit({ file_path: 'docs/win.txt', old_string: 'line endings\n', new_string: 'line endings\nmore\n' });

    await userMessage();
    await manager.tools.notebookEdit({ notebook_path: 'notebooks/analysis.ipynb', cell_id: '1c2d3e4f', new_source: '', edit_mode: 'delete' });
    await manager.tools.notebookEdit({ notebook_path: 'notebooks/analysis.ipynb', edit_mode: 'insert', cell_type: 'markdown', new_source: '# Notes' });
    await manager.tools.edit({ file_path: 'src/config/defaults.json', old_string: '3', new_string: '5' });
    await rename({ from: 'src/app.ts', to: 'src/server.ts' });

    await userMessage();
    await manager.tools.write({ file_path: 'src/server.ts', content: 'rewritten\n' });
    await manager.tools.edit({ file_path: 'README.md', old_string: '', new_string: '# Project\n' });
    await manager.tools.edit({ file_path: 'src/config/defaults.json', old_string: '"retries"', new_string: '"attempts"' });
    const final = snapshotTree(project.root);

    expect(new Set(turns.map((turn) => JSON.stringify(turn.snapshot))).size).toBe(3); // each turn saw a different project
    for (const index of [1, 0, 2, 0, 1]) {
      await manager.rewindFiles(turns[index]!.id);
      expect(snapshotTree(project.root), `after rewinding to checkpoint ${index + 1}`).toEqual(withoutCreatedDirectories(turns[index]!.snapshot, snapshotTree(project.root)));
    }
    expect(project.read('untouched.txt').toString()).toBe('never tracked\n');
    expect(final['README.md']).toBeDefined();
  });
});

/** A rewind leaves directories the agent created unless it empties them; every file must match exactly. */
function withoutCreatedDirectories(expected: Record<string, string>, actual: Record<string, string>): Record<string, string> {
  const result = { ...expected };
  for (const [key, value] of Object.entries(actual)) if (key.endsWith('/') && !(key in expected)) result[key] = value;
  return result;
}
