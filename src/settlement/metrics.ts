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

/** how long a scrape waits for the open exceptions before it keeps the last figures */
const SCRAPE_READ_TIMEOUT_MS = 1000

async function openExceptionsOrNull (s: SettlementStore): Promise<Awaited<ReturnType<SettlementStore['listExceptions']>>['items'] | null> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<null>((resolve) => { timer = setTimeout(() => { resolve(null) }, SCRAPE_READ_TIMEOUT_MS); timer.unref() })
  try {
    const read = s.listExceptions({ status: 'open', limit: SCRAPE_EXCEPTIONS_MAX }).then((r) => r.items, () => null)
    return await Promise.race([read, late])
  } finally {
    clearTimeout(timer)
  }
}

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
      // a store that cannot answer (Redis gone, failing over) leaves the last figures: the scrape itself, and
      // every other metric on it, must still answer when they are needed most
      const items = await openExceptionsOrNull(s)
      if (items === null) return
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
