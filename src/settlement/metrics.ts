// The settlement's metrics, on the app's registry: postings by outcome, holds expired, and the open
// exceptions by kind with the oldest one's age (read from the store when scraped).
import { Counter, Gauge, type Registry } from 'prom-client'
import { EXCEPTION_KINDS, OUTCOMES, type SettlementStore } from './types.js'

export interface SettlementMetrics {
  postings: Counter<'outcome'>
  holdsExpired: Counter
}

/** the most open exceptions a scrape reads; past it the figures say "at least" */
const SCRAPE_EXCEPTIONS_MAX = 100_000

const made = new WeakMap<Registry, SettlementMetrics>()

/** the settlement's metrics on this registry, made once */
export function settlementMetrics (registry: Registry, settlement: () => SettlementStore | null, clock: () => number = Date.now): SettlementMetrics {
  const kept = made.get(registry)
  if (kept !== undefined) return kept
  const postings = new Counter({ name: 'extauth_settlement_postings_total', help: 'statement postings applied, by outcome', labelNames: ['outcome'], registers: [registry] })
  for (const o of OUTCOMES) postings.inc({ outcome: o }, 0)
  const holdsExpired = new Counter({ name: 'extauth_holds_expired_total', help: 'authorization holds released by expiry', registers: [registry] })
  let oldestAt: number | null = null
  // eslint-disable-next-line no-new -- registered on the registry, read through it
  new Gauge({
    name: 'extauth_reconciliation_exceptions_open',
    help: 'reconciliation exceptions waiting for an operator, by kind',
    labelNames: ['kind'],
    registers: [registry],
    async collect () {
      const s = settlement()
      if (s === null) return
      let items
      try {
        ({ items } = await s.listExceptions({ status: 'open', limit: SCRAPE_EXCEPTIONS_MAX }))
      } catch {
        // the store does not answer (Redis down): the last values stay, and every other metric is still
        // scraped (a failing collect would fail the whole /metrics, when an outage most needs it)
        return
      }
      const byKind = new Map<string, number>(EXCEPTION_KINDS.map((k) => [k, 0]))
      oldestAt = null
      for (const x of items) {
        byKind.set(x.kind, (byKind.get(x.kind) ?? 0) + 1)
        if (oldestAt === null || x.createdAtMs < oldestAt) oldestAt = x.createdAtMs
      }
      for (const [kind, n] of byKind) this.set({ kind }, n)
    }
  })
  // eslint-disable-next-line no-new -- registered on the registry, read through it
  new Gauge({
    name: 'extauth_reconciliation_exception_oldest_age_seconds',
    help: 'age of the oldest open reconciliation exception (0 when none)',
    registers: [registry],
    collect () {
      this.set(oldestAt === null ? 0 : Math.max(0, (clock() - oldestAt) / 1000))
    }
  })
  const m = { postings, holdsExpired }
  made.set(registry, m)
  return m
}
