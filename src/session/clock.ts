/** Milliseconds in a day: UTC has no daylight saving, and JavaScript time no leap seconds. */
const dayMs = 86_400_000;

let lastMs = Number.NaN;
let lastIso = '';
let dayStartMs = Number.NaN;
let dayPrefix = '';

/**
 * The current time as the log stores it (ISO 8601, UTC, milliseconds), the
 * same string as `new Date().toISOString()`. Every backup and every tool
 * write records one, so the date part is formatted once a day and the time
 * of day by arithmetic: `toISOString` consults the time zone tables on each
 * call, which showed in the profile of a tracked Edit.
 */
export function now(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = isoString(ms);
  }
  return lastIso;
}

/** `new Date(ms).toISOString()` for a time in 1970–9999. */
export function isoString(ms: number): string {
  if (!(ms >= 0 && ms < 253_402_300_800_000)) return new Date(ms).toISOString(); // outside the plain four-digit years
  const sinceMidnight = ms % dayMs;
  const midnight = ms - sinceMidnight;
  if (midnight !== dayStartMs) {
    dayStartMs = midnight;
    dayPrefix = new Date(midnight).toISOString().slice(0, 11); // "YYYY-MM-DDT"
  }
  const hours = Math.floor(sinceMidnight / 3_600_000);
  const minutes = Math.floor(sinceMidnight / 60_000) % 60;
  const seconds = Math.floor(sinceMidnight / 1000) % 60;
  const millis = sinceMidnight % 1000;
  return `${dayPrefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

function two(value: number): string {
  return value < 10 ? `0${value}` : `${value}`;
}
