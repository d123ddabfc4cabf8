export interface RetrySettings {
  /**
   * Wait after the first failed attempt, in milliseconds.
   * @default 250
   */
  initialDelayMs?: number;
  /**
   * Each further failure multiplies the wait by this.
   * @default 2
   */
  factor?: number;
  /**
   * The longest wait between two attempts, however long the outage.
   * @default 30000
   */
  maxDelayMs?: number;
}

/**
 * Exponential backoff with a cap, spread ±20% so that many machines that lost
 * the same database do not all come back at the same instant.
 */
export function retryDelay(settings: RetrySettings, attempt: number): number {
  const initial = settings.initialDelayMs ?? 250;
  const cap = settings.maxDelayMs ?? 30_000;
  const base = Math.min(cap, initial * (settings.factor ?? 2) ** Math.max(0, attempt - 1));
  return Math.round(Math.min(cap, base * (0.8 + Math.random() * 0.4)));
}
