/// <reference lib="dom" />
import type { DiffResponse, ErrorResponse, PlanPreviewResponse, PreviewResponse, RewindResponse, SessionsResponse, TimelineResponse } from '../timeline-types.js';
import type { SelectionRequest } from './selection.js';

/** An error answer of the server: the library's code and its sentence. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * The server's endpoints. Every address is relative to the page's, whose
 * first path segment is the token, so each request carries it.
 */
export const api = {
  sessions: () => get<SessionsResponse>('api/sessions'),
  timeline: (sessionId: string) => get<TimelineResponse>(`api/sessions/${encodeURIComponent(sessionId)}`),
  preview: (sessionId: string, checkpointId: string) => get<PreviewResponse>(`api/sessions/${encodeURIComponent(sessionId)}/checkpoints/${encodeURIComponent(checkpointId)}/preview`),
  diff: (sessionId: string, checkpointId: string, file: string) =>
    get<DiffResponse>(`api/sessions/${encodeURIComponent(sessionId)}/checkpoints/${encodeURIComponent(checkpointId)}/diff?path=${encodeURIComponent(file)}`),
  /** `plan` is the digest of the preview the user confirmed: the server refuses with PLAN_CHANGED when a rewind would now do otherwise. */
  rewind: (sessionId: string, checkpointId: string, scope: string, plan: string) =>
    post<RewindResponse>(`api/sessions/${encodeURIComponent(sessionId)}/rewind`, { checkpointId, scope, plan }),
  /** A rewind of some files or hunks: its dry run, whose `plan` the real run sends back. */
  previewSelected: (sessionId: string, checkpointId: string, selection: SelectionRequest) =>
    post<PlanPreviewResponse>(`api/sessions/${encodeURIComponent(sessionId)}/rewind`, { checkpointId, ...selection, dryRun: true }),
  rewindSelected: (sessionId: string, checkpointId: string, selection: SelectionRequest, plan: string) =>
    post<RewindResponse>(`api/sessions/${encodeURIComponent(sessionId)}/rewind`, { checkpointId, ...selection, plan }),
  /** A revert of one turn: its dry run, and the real run with the dry run's `plan`. */
  previewRevert: (sessionId: string, checkpointId: string, onConflict: string) =>
    post<PlanPreviewResponse>(`api/sessions/${encodeURIComponent(sessionId)}/revert`, { checkpointId, onConflict, dryRun: true }),
  revert: (sessionId: string, checkpointId: string, onConflict: string, plan: string) => post<RewindResponse>(`api/sessions/${encodeURIComponent(sessionId)}/revert`, { checkpointId, onConflict, plan }),
  undo: (sessionId: string, undoCheckpointId: string) => post<RewindResponse>(`api/sessions/${encodeURIComponent(sessionId)}/undo`, { undoCheckpointId }),
};

async function get<T>(address: string): Promise<T> {
  return answer<T>(await fetch(address, { headers: { accept: 'application/json' } }));
}

async function post<T>(address: string, body: unknown): Promise<T> {
  return answer<T>(await fetch(address, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));
}

async function answer<T>(response: Response): Promise<T> {
  const body = (await response.json()) as T | ErrorResponse;
  if (!response.ok) {
    const { error } = body as ErrorResponse;
    throw new ApiError(error.code, error.message);
  }
  return body as T;
}
