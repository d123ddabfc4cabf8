/** The current time as the log stores it (ISO 8601, UTC). */
export function now(): string {
  return new Date().toISOString();
}
