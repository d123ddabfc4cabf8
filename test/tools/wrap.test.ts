import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { trackTool } from '../../src/tools/index.js';
import { failsWithoutChanges, storedRecords, toolSession, trackedPaths } from './tool-session.js';

describe('trackTool(manager, executor, { paths })', () => {
  it('backs up the files named by input fields before the executor writes them, and returns its result', async () => {
    const { project, manager, turn } = await toolSession({ 'config.json': '{"debug":false}\n' });
    const writeJson = trackTool(
      manager,
      async (input: { target: string; value: object }) => {
        fs.writeFileSync(path.join(project.root, input.target), `${JSON.stringify(input.value)}\n`);
        return { written: input.target };
      },
      { paths: ['target'] },
    );

    expect(await writeJson({ target: 'config.json', value: { debug: true } })).toEqual({ written: 'config.json' });
    expect(await writeJson({ target: 'created.json', value: {} })).toEqual({ written: 'created.json' });
    expect(project.read('config.json').toString()).toBe('{"debug":true}\n');

    await manager.rewindFiles(turn);
    expect(project.read('config.json').toString()).toBe('{"debug":false}\n');
    expect(project.exists('created.json')).toBe(false);
  });

  it('takes fields holding lists of paths, skips absent optional fields, and accepts a function of the input', async () => {
    const { project, manager, turn } = await toolSession({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const touch = async (input: { files: string[]; also?: string }) => {
      for (const file of [...input.files, ...(input.also === undefined ? [] : [input.also])]) fs.writeFileSync(project.file(file), 'touched\n');
    };
    await trackTool(manager, touch, { paths: ['files', 'also'] })({ files: ['a.txt', 'b.txt'] });
    const move = trackTool(manager, async (input: { from: string; to: string }) => fs.renameSync(project.file(input.from), project.file(input.to)), {
      paths: (input) => [input.from, input.to],
    });
    await move({ from: 'c.txt', to: 'd.txt' });

    expect(trackedPaths(project).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt']);
    await manager.rewindFiles(turn);
    expect([project.read('a.txt').toString(), project.read('b.txt').toString(), project.read('c.txt').toString()]).toEqual(['a\n', 'b\n', 'c\n']);
    expect(project.exists('d.txt')).toBe(false);
  });

  it('refuses the call with a typed error, without running the executor, when tracking fails', async () => {
    const { project, manager } = await toolSession();
    fs.writeFileSync(path.join(project.outside, 'secret.txt'), 'outside\n');
    let calls = 0;
    const executor = async (input: { file: string }) => {
      calls += 1;
      fs.writeFileSync(path.resolve(project.root, input.file), 'written\n');
    };
    const tracked = trackTool(manager, executor, { paths: ['file'] });

    expect(await failsWithoutChanges(project, () => tracked({ file: '../outside/secret.txt' }))).toMatchObject({ code: 'PATH_OUTSIDE_PROJECT' });
    fs.symlinkSync(path.join(project.outside, 'secret.txt'), project.file('link.txt'));
    expect(await failsWithoutChanges(project, () => tracked({ file: 'link.txt' }))).toMatchObject({ code: 'PATH_IS_LINK' });
    expect(await failsWithoutChanges(project, () => tracked({ file: 3 as unknown as string }))).toMatchObject({
      code: 'INVALID_TOOL_INPUT',
      details: { tool: 'executor', field: 'file' },
    });
    expect(calls).toBe(0);
    expect(fs.readFileSync(path.join(project.outside, 'secret.txt'), 'utf8')).toBe('outside\n');
  });

  it('refuses before the first checkpoint, saying to call checkpoint()', async () => {
    const { project } = await toolSession();
    const manager = await project.open();
    let called = false;
    const tracked = manager.tools.wrap(async (_input: { path: string }) => void (called = true), { paths: ['path'] });
    await expect(tracked({ path: 'a.txt' })).rejects.toMatchObject({ code: 'NO_CHECKPOINT', message: expect.stringContaining('checkpoint(') });
    expect(called).toBe(false);
  });

  it('lets executor errors through unchanged (the same object), and records no write for them', async () => {
    const { project, manager } = await toolSession();
    const failure = new Error('disk on fire');
    const tracked = trackTool(manager, async (_input: { file: string }): Promise<void> => Promise.reject(failure), { paths: ['file'], tool: 'Burn' });
    await expect(tracked({ file: 'a.txt' })).rejects.toBe(failure);
    await manager.close();
    expect(storedRecords(project).filter((record) => record.type === 'write')).toEqual([]);
  });

  it('records what was written with the tool name and the tool call id, and passes this and extra arguments through', async () => {
    const { project, manager } = await toolSession();
    const host = {
      prefix: 'from-this',
      async save(input: { file: string }, options: { toolCallId: string }) {
        fs.writeFileSync(project.file(input.file), `${this.prefix} ${options.toolCallId}\n`);
        return options.toolCallId.length;
      },
    };
    host.save = manager.tools.wrap(host.save, { paths: ['file'], tool: 'Save', toolCallId: (_input, options) => options.toolCallId });

    expect(await host.save({ file: 'a.txt' }, { toolCallId: 'call_42' })).toBe(7);
    expect(project.read('a.txt').toString()).toBe('from-this call_42\n');
    expect(host.save.name).toBe('save');
    await manager.close();
    expect(storedRecords(project).filter((record) => record.type === 'write')).toEqual([
      expect.objectContaining({ path: 'a.txt', tool: 'Save', toolCallId: 'call_42', state: expect.objectContaining({ kind: 'file' }) }),
    ]);
  });
});
