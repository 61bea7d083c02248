// The money simulation on the memory store: the longest of the CI runs (docs/development/money.md).
import t from 'tap'
import { FAULT_KINDS, OP_KINDS } from '../../scripts/lib/money-sim/options.js'
import { MemoryStore } from '../../src/store/memory.js'
import { memoryStore } from '../../scripts/lib/money-sim/stores.js'
import { assertCoverage, ciOptions, simulate } from '../helpers/money-sim.js'
import { bucketOf } from '../../src/store/keys.js'

t.test('10,000 steps on the memory store hold every invariant', async (t) => {
  const opts = ciOptions({ store: 'memory', seed: 20261123, steps: 10_000 })
  const r = await simulate(t, opts, memoryStore())
  t.same(r.violations, [], 'no invariant failed')
  t.equal(r.stepsRun, opts.steps, 'every step ran')
  // a kill with a compensation in flight is rare by nature: counted, not required
  assertCoverage(t, r, opts, OP_KINDS, FAULT_KINDS.filter((k) => k !== 'kill-compensating'))
})

t.test('the same seed replays the same run', async (t) => {
  const opts = ciOptions({ store: 'memory', seed: 7, steps: 600, trace: true })
  const a = await simulate(t, opts, memoryStore())
  const b = await simulate(t, opts, memoryStore())
  t.ok((a.trace ?? []).length > 1000, 'the run made calls')
  t.same(a.violations, [], 'no invariant failed')
  t.equal(a.stepsRun, opts.steps, 'every step ran')
  t.same(b.trace, a.trace, 'every call, fault and kill again, in the same order')
})

t.test('the simulation fails a store that credits a repeated reference again', async (t) => {
  // a planted bug: the run must end on it, at the first repeat, whatever the seed
  class CreditsTwice extends MemoryStore {
    private n = 0
    override async credit (urn: string, amount: number, reference: string): ReturnType<MemoryStore['credit']> {
      return await super.credit(urn, amount, `${reference}#${++this.n}`)
    }
  }
  const opts = ciOptions({ store: 'memory', seed: 3, steps: 3_000 })
  const r = await simulate(t, opts, async (clock) => {
    const store = new CreditsTwice({ clock })
    return { store, prefix: '', close: async () => { await store.close() } }
  })
  t.equal(r.violations.length, 1, 'the run stopped at the first violation')
  t.match(r.violations[0], { invariant: 'store-agrees-with-model', detail: /^credit / })
})

t.test('the simulation fails a store that forgets the card controls', async (t) => {
  // a planted bug: authorizations decided without the controls a PATCH set
  class NoControls extends MemoryStore {
    override async authorize (input: Parameters<MemoryStore['authorize']>[0]): ReturnType<MemoryStore['authorize']> {
      const { controls: _controls, ...rest } = input
      return await super.authorize(rest)
    }
  }
  const opts = ciOptions({ store: 'memory', seed: 5, steps: 5_000 })
  const r = await simulate(t, opts, async (clock) => {
    const store = new NoControls({ clock })
    return { store, prefix: '', close: async () => { await store.close() } }
  })
  t.equal(r.violations.length, 1, 'the run stopped at the first violation')
  t.match(r.violations[0], { invariant: 'store-agrees-with-model', detail: /^authorize .*expected .*"reason":"control_(off|limit)"/ })
})

t.test('the simulation fails a store that loses one event', async (t) => {
  // a planted bug: the 40th credit changes the balance but its event never reaches the outbox
  class LosesAnEvent extends MemoryStore {
    private n = 0
    override async credit (urn: string, amount: number, reference: string, event?: Parameters<MemoryStore['credit']>[3]): ReturnType<MemoryStore['credit']> {
      const out = await super.credit(urn, amount, reference, event)
      if (!out.replayed && ++this.n === 40) (this as unknown as { streams: Map<number, unknown[]> }).streams.get(bucketOf(urn))?.pop()
      return out
    }
  }
  const opts = ciOptions({ store: 'memory', seed: 11, steps: 3_000 })
  const r = await simulate(t, opts, async (clock) => {
    const store = new LosesAnEvent({ clock })
    return { store, prefix: '', close: async () => { await store.close() } }
  })
  t.ok(r.eventsFolded > 0, `${r.eventsFolded} events folded`)
  t.equal(r.violations.length, 1, 'the run stopped at the first violation')
  t.match(r.violations[0], { invariant: 'events-replay', detail: /the events make \d+, the store has \d+/ })
})
