import os from 'node:os';

/**
 * The name this machine goes by in a session's records (`session-start`,
 * `project-moved`): `$REWINDABLE_HOST`, else the hostname. On a store shared
 * by machines it tells whose a session is, so that following a moved project
 * never takes a session away from the machine that still has its directory.
 * Set the variable where the hostname changes on every start (containers).
 */
export function thisHost(): string {
  const configured = process.env.REWINDABLE_HOST?.trim();
  return configured !== undefined && configured !== '' ? configured : os.hostname();
}
