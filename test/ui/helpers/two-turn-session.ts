import { tempProject, type TempProject } from '../../helpers/temp-project.js';

export interface TwoTurnSession {
  project: TempProject;
  sessionId: string;
  /** Checkpoint of turn one, before it changed anything. */
  first: string;
  /** Checkpoint of turn two, after turn one. */
  second: string;
  /** The project's files before each turn, and at the end. */
  atFirst: Record<string, string>;
  atSecond: Record<string, string>;
  atEnd: Record<string, string>;
}

/** Twelve numbered lines: a change to the first and one to the last are two hunks apart. */
export const notesBefore = Array.from({ length: 12 }, (_, index) => `line ${index + 1}\n`).join('');
export const notesAfter = notesBefore.replace('line 1\n', 'line one\n').replace('line 12\n', 'line twelve\n');
export const configBefore = 'export const port = 80;\n\nexport const host = "localhost";\n';

/**
 * A closed session of two turns, for rewinds of some files, some hunks, and
 * one turn: turn one changes a.txt and b.txt, two far-apart lines of
 * notes.txt (two hunks) and the port in config.ts; turn two changes the host
 * in config.ts, a line turn one left alone.
 */
export async function twoTurnSession(): Promise<TwoTurnSession> {
  const project = tempProject();
  project.write('a.txt', 'alpha\n');
  project.write('b.txt', 'beta\n');
  project.write('notes.txt', notesBefore);
  project.write('config.ts', configBefore);
  const atFirst = project.snapshot();
  const manager = await project.open();
  const first = (await manager.recordUserMessage({ role: 'user', content: 'Change the letters, the notes and the port' })).uuid;
  for (const [file, content] of [
    ['a.txt', 'alpha, changed\n'],
    ['b.txt', 'beta, changed\n'],
    ['notes.txt', notesAfter],
    ['config.ts', configBefore.replace('port = 80', 'port = 8080')],
  ] as const) {
    await manager.trackEdit(file);
    project.write(file, content);
    await manager.recordWrite(file);
  }
  const atSecond = project.snapshot();
  const second = (await manager.recordUserMessage({ role: 'user', content: 'Listen on every interface' })).uuid;
  await manager.trackEdit('config.ts');
  project.write('config.ts', configBefore.replace('port = 80', 'port = 8080').replace('"localhost"', '"0.0.0.0"'));
  await manager.recordWrite('config.ts');
  await manager.close();
  return { project, sessionId: manager.sessionId, first, second, atFirst, atSecond, atEnd: project.snapshot() };
}
