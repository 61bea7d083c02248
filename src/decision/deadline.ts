// The deadline guard of the decision endpoint: whatever the work is doing, an answer leaves by the deadline.
// When the deadline comes first, `signal` aborts (synchronously, so a decision that may have committed hands
// its compensation to the store before the 05 is written: see README "Money") and the deadline answer is used.
export interface Timers {
  setTimeout: (fn: () => void, ms: number) => unknown
  clearTimeout: (handle: unknown) => void
}

export const systemTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => { clearTimeout(handle as NodeJS.Timeout) }
}

export type Guarded<T> = { onDeadline: false, value: T } | { onDeadline: true }

/**
 * Runs `work` until it settles or `deadlineAtMs` (on `now`) passes, whichever is first. A rejection of the
 * work is the caller's to handle; once the deadline has answered, the work's late result or error is dropped.
 */
export async function withDeadline<T> (
  deadlineAtMs: number,
  work: (signal: AbortSignal) => Promise<T>,
  clock: { now: () => number, timers: Timers } = { now: Date.now, timers: systemTimers }
): Promise<Guarded<T>> {
  const ac = new AbortController()
  return await new Promise<Guarded<T>>((resolve, reject) => {
    let settled = false
    const timer = clock.timers.setTimeout(() => {
      if (settled) return
      settled = true
      // abort first: listeners dispatch compensation before the caller writes its answer
      ac.abort()
      resolve({ onDeadline: true })
    }, Math.max(0, deadlineAtMs - clock.now()))
    work(ac.signal).then((value) => {
      if (settled) return
      settled = true
      clock.timers.clearTimeout(timer)
      resolve({ onDeadline: false, value })
    }, (err: unknown) => {
      if (settled) return
      settled = true
      clock.timers.clearTimeout(timer)
      reject(err)
    })
  })
}
