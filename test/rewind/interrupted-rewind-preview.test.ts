import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeProjectKey, type RewindFilesResult } from '../../src/index.js';
import { newId, tempProject } from '../helpers/temp-project.js';

const summary = (result: RewindFilesResult) => ({
  files: result.files?.map((file) => ({ path: file.path, action: file.action, insertions: file.insertions, deletions: file.deletions, conflict: file.conflict })),
  insertions: result.insertions,
  deletions: result.deletions,
});

describe('a rewind a crash interrupted', () => {
  it('is previewed by a read-only dry run and diff as the real rewind does it, after rolling the interrupted one back', async () => {
    const project = tempProject();
    project.write('b.txt', 'b original\nline2\n');
    const manager = await project.open();
    const first = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'a.txt', content: 'a v1\n' });
    await manager.tools.edit({ file_path: 'b.txt', old_string: 'b original', new_string: 'b edited' });
    const second = await manager.checkpoint(newId());
    await manager.tools.write({ file_path: 'a.txt', content: 'a v2\n' });
    await manager.rewindFiles(first);
    await manager.close();
    // A kill after the rewind's writes and before its end record leaves the log cut there.
    const log = path.join(project.store, 'projects', encodeProjectKey(project.root), `${manager.sessionId}.jsonl`);
    const text = fs.readFileSync(log, 'utf8');
    fs.writeFileSync(log, text.slice(0, text.indexOf('{"type":"rewind-end"')));

    const reader = await project.open({ resume: manager.sessionId, readOnly: true });
    const preview = await reader.rewindFiles(second, { dryRun: true });
    const diffs = await reader.diffFiles(second);
    await reader.close();
    const writer = await project.open({ resume: manager.sessionId });
    const result = await writer.rewindFiles(second);

    expect(summary(preview)).toEqual(summary(result));
    expect(diffs.map((diff) => ({ path: diff.path, action: diff.action }))).toEqual(result.files?.map((file) => ({ path: file.path, action: file.action })));
    const patch = diffs.find((diff) => diff.path === project.file('a.txt'));
    expect(patch && 'patch' in patch ? patch.patch : undefined).toMatch(/-a v2\n\+a v1\n/);
    expect(project.read('a.txt').toString()).toBe('a v1\n');
    expect(project.read('b.txt').toString()).toBe('b edited\nline2\n');
  });
});
