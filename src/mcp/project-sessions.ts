import { CheckpointManager } from '../checkpoint-manager.js';
import { RewindableError, RewindableErrorCode } from '../errors.js';
import { assertUuid } from '../paths.js';
import { surveySessions, type SessionSurvey } from '../session/list-sessions.js';
import { enclosingProject } from '../cli/find-session.js';

export interface ProjectLocation {
  /** The directory the server was started for (`--cwd`), absolute. */
  cwd: string;
  /** The store directory, absolute. */
  storeDir: string;
}

/**
 * The sessions of the one project an MCP server serves, opened per call.
 * The agent's harness owns its live session and holds its lock: a session is
 * opened read-only (no lock) to list and preview, and for writing only for
 * the length of one rewind, then closed, so the lock is never held while idle.
 */
export class ProjectSessions {
  /** Writes one after another: two rewinds of one session at once would lock each other out. */
  private writing: Promise<unknown> = Promise.resolve();
  /** Every call with a session open, so a server that stops can let them finish. */
  private readonly running = new Set<Promise<unknown>>();

  constructor(readonly location: ProjectLocation) {}

  /** The project: the nearest directory from `cwd` up with sessions in the store (as git finds its repository), else `cwd`. */
  async root(): Promise<string> {
    return (await enclosingProject(this.location.storeDir, this.location.cwd)) ?? this.location.cwd;
  }

  /** The project's sessions, the most recently active first. Takes no lock. */
  async survey(): Promise<SessionSurvey> {
    return surveySessions({ cwd: await this.root(), storeDir: this.location.storeDir });
  }

  /** The session `sessionId` names (checked to be a UUID), or the most recently active one. */
  async sessionId(sessionId: string | undefined): Promise<string> {
    if (sessionId !== undefined) {
      assertUuid(sessionId, 'session id');
      return sessionId.toLowerCase();
    }
    const survey = await this.survey();
    const newest = survey.sessions[0];
    if (newest !== undefined) return newest.sessionId;
    throw new RewindableError(
      RewindableErrorCode.SESSION_NOT_FOUND,
      `No session of ${survey.root} is in the store ${this.location.storeDir}: the agent's harness records sessions there when it uses rewindable. ` +
        'Start the server with --cwd set to the project directory, or --store set to the store the harness uses.',
    );
  }

  /** Runs `work` on the session opened read-only: listing and previews, while the harness has it open. */
  async read<T>(sessionId: string | undefined, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    return this.withSession(await this.sessionId(sessionId), true, work);
  }

  /**
   * Runs `work` on the session opened for writing, and closes it at once.
   * While the harness holds the session, opening it fails with SESSION_LOCKED
   * and nothing is written.
   */
  async write<T>(sessionId: string | undefined, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    const run = this.writing.then(async () => this.withSession(await this.sessionId(sessionId), false, work));
    this.writing = run.catch(() => {});
    return run;
  }

  /** Resolves once the calls under way are done: a client that hangs up never cuts a rewind short. */
  async settled(): Promise<void> {
    await this.writing;
    await Promise.allSettled([...this.running]);
  }

  private async withSession<T>(sessionId: string, readOnly: boolean, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    const call = this.openAndRun(sessionId, readOnly, work);
    this.running.add(call);
    void call.catch(() => {}).finally(() => this.running.delete(call));
    return call;
  }

  private async openAndRun<T>(sessionId: string, readOnly: boolean, work: (manager: CheckpointManager) => Promise<T>): Promise<T> {
    const manager = await CheckpointManager.open({ cwd: await this.root(), session: { resume: sessionId, readOnly }, storeDir: this.location.storeDir });
    try {
      return await work(manager);
    } finally {
      await manager.close();
    }
  }
}
