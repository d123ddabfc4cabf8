/** The addresses of the server's resources. */
export const sessionsUri = 'rewindable://sessions';
export const checkpointsUriTemplate = 'rewindable://sessions/{sessionId}/checkpoints';
export const diffUriTemplate = 'rewindable://sessions/{sessionId}/checkpoints/{checkpointId}/diff';

export const checkpointsUri = (sessionId: string): string => `rewindable://sessions/${sessionId}/checkpoints`;
export const diffUri = (sessionId: string, checkpointId: string): string => `rewindable://sessions/${sessionId}/checkpoints/${checkpointId}/diff`;
