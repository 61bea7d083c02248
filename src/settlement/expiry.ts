// Hold expiry: every instance runs it; each bucket's due holds are expired in one script each, so instances
// running at once expire each hold once. It reads only the buckets with something due, and there only what is
// due (the hold index by expiry): its cost follows what expires, not what is held.
import type { SettlementStore } from './types.js'

/** holds expired per script call */
export const EXPIRY_BATCH = 200
/** how often each instance looks for due holds */
export const EXPIRY_INTERVAL_MS_DEFAULT = 5000

/** how often to look: every 5 s, more often for holds shorter than that (HOLD_EXPIRY=5s in a demo) */
export function expiryIntervalMs (holdExpiryMs: number | undefined): number {
  return Math.max(1000, Math.min(EXPIRY_INTERVAL_MS_DEFAULT, Math.floor((holdExpiryMs ?? EXPIRY_INTERVAL_MS_DEFAULT) / 5)))
}

/** Expires every hold due at asOfMs; returns how many this call expired. */
export async function expireDue (settlement: SettlementStore, asOfMs: number, batch = EXPIRY_BATCH): Promise<number> {
  let expired = 0
  for (const bucket of await settlement.dueBuckets(asOfMs)) {
    for (;;) {
      const r = await settlement.expireBucket(bucket, asOfMs, batch)
      expired += r.expired
      if (!r.more) break
    }
  }
  return expired
}

export interface ExpiryRunner { stop: () => void }

/** Runs expireDue every intervalMs (one run at a time); errors are reported and the next run tries again. */
export function startExpiry (settlement: SettlementStore, opts: { intervalMs?: number, clock?: () => number, ready?: () => boolean, onExpired?: (n: number) => void, onError?: (err: Error) => void }): ExpiryRunner {
  let running = false
  const timer = setInterval(() => {
    // a store that does not answer now is left alone: what falls due meanwhile expires at the next run after
    if (running || opts.ready?.() === false) return
    running = true
    expireDue(settlement, (opts.clock ?? Date.now)())
      .then((n) => { if (n > 0) opts.onExpired?.(n) })
      .catch((err: unknown) => { opts.onError?.(err as Error) })
      .finally(() => { running = false })
  }, opts.intervalMs ?? EXPIRY_INTERVAL_MS_DEFAULT)
  timer.unref()
  return { stop: () => { clearInterval(timer) } }
}
