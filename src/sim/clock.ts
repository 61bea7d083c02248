// Simulators read time through a clock so tests can move it instead of sleeping.

export type Clock = () => number

export interface ManualClock {
  now: Clock
  advance (ms: number): void
  set (epochMs: number): void
}

export function manualClock (startMs = Date.UTC(2026, 0, 15, 10, 0, 0)): ManualClock {
  let t = startMs
  return {
    now: () => t,
    advance (ms) { t += ms },
    set (epochMs) { t = epochMs }
  }
}
