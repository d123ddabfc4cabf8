import { describe, expect, it } from 'vitest';
import type { CheckpointManager, FileDiff, RewindFilesResult } from '../../src/index.js';
import { tempProject } from '../helpers/temp-project.js';

/** `toolCallIds` by file name, for the files a result lists. */
function idsOf(files: RewindFilesResult['files'] | FileDiff[] | undefined, root: string): Record<string, string[]> {
  return Object.fromEntries((files ?? []).flatMap((file) => ('toolCallIds' in file ? [[file.path.slice(root.length + 1), file.toolCallIds]] : [])));
}

async function previewIds(manager: CheckpointManager, checkpointId: string, root: string) {
  return idsOf((await manager.rewindFiles(checkpointId, { dryRun: true })).files, root);
}

describe('the tool calls recorded with each write, read back', () => {
  it('per file, a rewind lists the calls it takes back; a diff the same; the transcript each turn’s calls and their files', async () => {
    const project = tempProject();
    project.write('a.txt', 'one\n');
    const manager = await project.open();
    const { tools } = manager;
    const first = await manager.recordUserMessage('first');
    await tools.edit({ file_path: 'a.txt', old_string: 'one', new_string: 'two' }, { toolCallId: 'call-1' });
    await tools.write({ file_path: 'b.txt', content: 'b\n' }, { toolCallId: 'call-2' });
    await tools.edit({ file_path: 'a.txt', old_string: 'two', new_string: 'three' }, { toolCallId: 'call-3' });
    const second = await manager.recordUserMessage('second');
    await tools.edit({ file_path: 'a.txt', old_string: 'three', new_string: 'four' }, { toolCallId: 'call-4' });
    await manager.trackEdit('c.txt');
    project.write('c.txt', 'written by a tool without a call id\n');
    await manager.recordWrite('c.txt', { tool: 'script' });

    expect(await previewIds(manager, second.uuid, project.root)).toEqual({ 'a.txt': ['call-4'], 'c.txt': [] });
    expect(await previewIds(manager, first.uuid, project.root)).toEqual({ 'a.txt': ['call-1', 'call-3', 'call-4'], 'b.txt': ['call-2'], 'c.txt': [] });
    expect(idsOf(await manager.diffFiles(first.uuid), project.root)).toEqual({ 'a.txt': ['call-1', 'call-3', 'call-4'], 'b.txt': ['call-2'], 'c.txt': [] });
    expect((await manager.getTranscript()).map((entry) => entry.toolCalls)).toEqual([
      [
        { toolCallId: 'call-1', tool: 'Edit', files: [project.file('a.txt')] },
        { toolCallId: 'call-2', tool: 'Write', files: [project.file('b.txt')] },
        { toolCallId: 'call-3', tool: 'Edit', files: [project.file('a.txt')] },
      ],
      [{ toolCallId: 'call-4', tool: 'Edit', files: [project.file('a.txt')] }],
    ]);

    // A real rewind reports the same; calls it took back are not taken back again by a later rewind.
    const rewound = await manager.rewindFiles(second.uuid);
    expect(idsOf(rewound.files, project.root)).toEqual({ 'a.txt': ['call-4'], 'c.txt': [] });
    const third = await manager.recordUserMessage('third');
    await tools.edit({ file_path: 'a.txt', old_string: 'three', new_string: 'five' }, { toolCallId: 'call-5' });
    expect(await previewIds(manager, first.uuid, project.root)).toEqual({ 'a.txt': ['call-1', 'call-3', 'call-5'], 'b.txt': ['call-2'] });
    expect(await previewIds(manager, third.uuid, project.root)).toEqual({ 'a.txt': ['call-5'] });
    // Undoing that rewind puts call-4's write back and takes back only what came after it.
    expect(await previewIds(manager, rewound.undoCheckpointId!, project.root)).toEqual({ 'a.txt': ['call-5'], 'c.txt': [] });

    // The same from the log alone, in a resumed session.
    await manager.close();
    const resumed = await project.open({ resume: manager.sessionId });
    expect(await previewIds(resumed, first.uuid, project.root)).toEqual({ 'a.txt': ['call-1', 'call-3', 'call-5'], 'b.txt': ['call-2'] });
    expect(await previewIds(resumed, rewound.undoCheckpointId!, project.root)).toEqual({ 'a.txt': ['call-5'], 'c.txt': [] });
    expect((await resumed.getTranscript()).map((entry) => entry.toolCalls?.map((call) => call.toolCallId))).toEqual([['call-1', 'call-2', 'call-3'], ['call-4'], ['call-5']]);
  });

  it('a checkpoint refreshed in place takes the calls made before the refresh into its state', async () => {
    const project = tempProject();
    project.write('a.txt', 'one\n');
    const manager = await project.open();
    const turn = await manager.checkpoint();
    await manager.tools.edit({ file_path: 'a.txt', old_string: 'one', new_string: 'two' }, { toolCallId: 'call-1' });
    await manager.checkpoint(turn);
    await manager.tools.edit({ file_path: 'a.txt', old_string: 'two', new_string: 'three' }, { toolCallId: 'call-2' });
    expect(await previewIds(manager, turn, project.root)).toEqual({ 'a.txt': ['call-2'] });
  });
});
