// The money simulation with SETTLEMENT_MODE=holds: every approval a hold, through faults at every await,
// repeats, deadline compensations, reversals and kills, and expiry run between steps (as another instance
// would); besides every invariant of the final mode (balances, windows, daily totals, the event fold), each
// customer's held is what its approvals still hold (released once, never both expired and still held); and
// the platform's statements imported between steps (statements.ts): books-agree holds each customer's
// available, held and ledger to the model's, each platformId applied once.
import t from 'tap'
import { memoryStore, redisStore } from '../../scripts/lib/money-sim/stores.js'
import { ciOptions, simulate } from '../helpers/money-sim.js'
import { SHARED_REDIS_URL } from '../helpers/redis.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Customer } from '../../src/store/types.js'
import { MemorySettlement } from '../../src/settlement/memory-settlement.js'

t.test('holds mode on the memory store', async (t) => {
  const opts = { ...ciOptions({ store: 'memory', seed: 20261127, steps: 4000 }), settlement: 'holds' as const }
  const r = await simulate(t, opts, memoryStore())
  t.same(r.violations, [], 'no invariant failed')
  t.equal(r.stepsRun, opts.steps, 'every step ran')
  const approvals = Object.entries(r.counts.answers).filter(([k]) => k.startsWith('00')).reduce((n, [, v]) => n + v, 0)
  t.ok(approvals > 100, `approvals were held (${approvals})`)
  t.ok((r.counts.ops.expiry ?? 0) > 20, `holds expired (${r.counts.ops.expiry ?? 0})`)
  const ops = r.counts.ops
  t.ok((ops.statements ?? 0) > 20 && (ops['statement-lines'] ?? 0) > 100, `statements imported (${ops.statements ?? 0}, ${ops['statement-lines'] ?? 0} lines)`)
  t.ok((ops['statement-interrupted'] ?? 0) > 0 && (ops['statement-reimports'] ?? 0) > 0 && (ops['statement-overlap-lines'] ?? 0) > 0,
    'an import cut short and imported again, a statement imported twice, lines of an earlier statement again')
})

t.test('books-agree fails a store that applies a posting twice', async (t) => {
  // a planted bug: the settlement forgets which platformIds it applied, so an overlapping or repeated
  // statement applies its lines again
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the method itself, called below with its own `this`
  const apply = MemorySettlement.prototype.applyPosting
  MemorySettlement.prototype.applyPosting = async function (this: MemorySettlement, ...args) {
    (this as unknown as { postings: Map<string, unknown> }).postings.clear()
    return await apply.apply(this, args)
  }
  t.teardown(() => { MemorySettlement.prototype.applyPosting = apply })
  const opts = { ...ciOptions({ store: 'memory', seed: 7, steps: 1500 }), settlement: 'holds' as const }
  const r = await simulate(t, opts, memoryStore())
  t.match(r.violations[0], { invariant: 'books-agree' })
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

t.test('lifecycle-queued fails a settlement that never queues a FAILED lifecycle record', async (t) => {
  // a planted bug: the exception queue takes nothing
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the method itself, restored below
  const open = MemorySettlement.prototype.openException
  MemorySettlement.prototype.openException = async () => ({ id: '', opened: false })
  t.teardown(() => { MemorySettlement.prototype.openException = open })
  const opts = { ...ciOptions({ store: 'memory', seed: 285764910, steps: 600 }), settlement: 'holds' as const }
  const r = await simulate(t, opts, memoryStore())
  t.ok(r.violations.some((v) => v.invariant === 'lifecycle-queued'), 'a FAILED record told to its client and not in the queue is caught')
})
