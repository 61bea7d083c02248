// Timers passed in rather than taken from the global scope, so a test can drive them by hand
// (test/helpers/manual-clock.ts): the deadline guard and the log flusher take them.
export interface Timers {
  setTimeout: (fn: () => void, ms: number) => unknown
  clearTimeout: (handle: unknown) => void
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => { clearTimeout(handle as NodeJS.Timeout) }
}
