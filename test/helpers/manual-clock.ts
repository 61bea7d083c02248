// A clock and timers driven by hand, for code that takes injectable timers (the deadline guard, the
// compensator): time moves, and due timers fire, only when the test says so.
import type { Timers } from '../../src/decision/deadline.js'

export interface ManualClock {
  now: () => number
  timers: Timers
  /** timers set and not yet fired or cleared */
  pending: () => number
  /** moves the time to `ms` and fires the timers due by then, earliest first */
  advanceTo: (ms: number) => void
}

export function manualClock (startMs: number): ManualClock {
  let nowMs = startMs
  let due: Array<{ fn: () => void, atMs: number }> = []
  return {
    now: () => nowMs,
    timers: {
      setTimeout: (fn, ms) => { const h = { fn, atMs: nowMs + ms }; due.push(h); return h },
      clearTimeout: (h) => { due = due.filter((d) => d !== h) }
    },
    pending: () => due.length,
    advanceTo: (ms) => {
      nowMs = ms
      for (;;) {
        const next = due.filter((d) => d.atMs <= ms).sort((a, b) => a.atMs - b.atMs)[0]
        if (next === undefined) return
        due = due.filter((d) => d !== next)
        next.fn()
      }
    }
  }
}
