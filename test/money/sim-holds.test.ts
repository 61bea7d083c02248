// The money simulation with SETTLEMENT_MODE=holds: every approval a hold, through faults at every await,
// repeats, deadline compensations, reversals and kills, and expiry run between steps (as another instance
// would); besides every invariant of the final mode (balances, windows, daily totals, the event fold), each
// customer's held is what its approvals still hold (released once, never both expired and still held).
import t from 'tap'
import { memoryStore, redisStore } from '../../scripts/lib/money-sim/stores.js'
import { ciOptions, simulate } from '../helpers/money-sim.js'
import { SHARED_REDIS_URL } from '../helpers/redis.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Customer } from '../../src/store/types.js'

t.test('holds mode on the memory store', async (t) => {
  const opts = { ...ciOptions({ store: 'memory', seed: 20261127, steps: 4000 }), settlement: 'holds' as const }
  const r = await simulate(t, opts, memoryStore())
  t.same(r.violations, [], 'no invariant failed')
  t.equal(r.stepsRun, opts.steps, 'every step ran')
  const approvals = Object.entries(r.counts.answers).filter(([k]) => k.startsWith('00')).reduce((n, [, v]) => n + v, 0)
  t.ok(approvals > 100, `approvals were held (${approvals})`)
  t.ok((r.counts.ops.expiry ?? 0) > 20, `holds expired (${r.counts.ops.expiry ?? 0})`)
})

t.test('the holds invariant fails a store whose held is wrong', async (t) => {
  // a planted bug: held reported one more than is held, once anything is
  class HeldOffByOne extends MemoryStore {
    override async getCustomer (urn: string): Promise<Customer | null> {
      const c = await super.getCustomer(urn)
      return c === null || c.held === 0 ? c : { ...c, held: c.held + 1 }
    }
  }
  const opts = { ...ciOptions({ store: 'memory', seed: 5, steps: 400 }), settlement: 'holds' as const }
  const r = await simulate(t, opts, async (clock) => ({ store: new HeldOffByOne({ clock }), prefix: '', close: async () => {} }))
  t.match(r.violations[0], { invariant: 'balance', detail: /held: store \d+, model \d+/ })
})

t.test('holds mode on Redis', async (t) => {
  const opts = { ...ciOptions({ store: 'redis', seed: 20261128, steps: 1000 }), settlement: 'holds' as const }
  const r = await simulate(t, opts, redisStore(SHARED_REDIS_URL))
  t.same(r.violations, [], 'no invariant failed')
  t.equal(r.stepsRun, opts.steps, 'every step ran')
})
