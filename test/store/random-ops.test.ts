// A seeded random-operations test over both stores. After every step: initial + credits − debits − held +
// released = available (the model's sums against the store), nothing negative, and a rejected or replayed
// operation changes nothing. Operations: credits, debits, authorizations, retries (same and conflicting),
// reversals, deadline misses (late commit, abandon before and after), and concurrent batches of them.
// The seed is printed on failure: TEST_SEED=<seed> reruns it.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryStore } from '../../src/store/memory.js'
import { StoreRejection } from '../../src/errors.js'
import { abandonInputOf, type AuthorizeInput, type Store } from '../../src/store/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { authInput, limit } from './contract.js'
import { seededRandom } from '../../src/sim/prng.js'

interface Model {
  credits: number
  debits: number
  held: number
  released: number
  /** approved decisions and what they still hold */
  approvals: Map<string, { input: AuthorizeInput, held: number }>
  inputs: AuthorizeInput[]
  moneyRefs: Array<{ kind: 'credit' | 'debit', ref: string, amount: number }>
}

/** what the operation did, and whether it must have left every balance as it was */
type Op = () => Promise<{ what: string, noChange: boolean }>

async function run (t: Test, store: Store, seed: number, steps: number): Promise<void> {
  const rnd = seededRandom(seed)
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)] as T
  const amount = (): number => 1 + Math.floor(rnd() * 500)
  const urns = [0, 1, 2].map((i) => `RND${seed % 100000}x${i}${process.pid}`.slice(0, 20))
  const models = new Map<string, Model>()
  for (const urn of urns) {
    await store.putCustomer(urn, {})
    models.set(urn, { credits: 0, debits: 0, held: 0, released: 0, approvals: new Map(), inputs: [], moneyRefs: [] })
  }
  const lim = limit({ ruleId: 'rnd-count', max: 6, windowStartMs: 0, retainMs: 86_400_000 })
  const amtLim = limit({ ruleId: 'rnd-amount', measure: 'amount', per: 'card', max: 2500, code: '61', windowStartMs: 0, retainMs: 86_400_000 })

  /** one random operation on one urn; applies its effect to the model; returns what it did */
  function makeOp (urn: string): Op {
    const m = models.get(urn) as Model
    const r = rnd()
    if (r < 0.15) {
      const retry = m.moneyRefs.length > 0 && rnd() < 0.3 ? pick(m.moneyRefs) : null
      const kind: 'credit' | 'debit' = retry?.kind ?? (rnd() < 0.6 ? 'credit' : 'debit')
      const ref = retry?.ref ?? randomUUID()
      const amt = retry !== null && rnd() < 0.7 ? retry.amount : amount() * (kind === 'credit' ? 3 : 1)
      return async () => {
        try {
          const res = kind === 'credit' ? await store.credit(urn, amt, ref) : await store.debit(urn, amt, ref)
          if (!res.replayed) {
            if (kind === 'credit') m.credits += amt; else m.debits += amt
            m.moneyRefs.push({ kind, ref, amount: amt })
          }
          return { what: `${kind} ${amt} ${res.replayed ? 'replayed' : 'ok'}`, noChange: res.replayed }
        } catch (err) {
          if (err instanceof StoreRejection) return { what: `${kind} rejected ${err.code}`, noChange: true }
          throw err
        }
      }
    }
    if (r < 0.65) {
      // a new authorization, a retry of an earlier one, or a conflicting reuse of its reference
      let input: AuthorizeInput
      const prior = m.inputs.length > 0 ? pick(m.inputs) : null
      const q = rnd()
      if (prior !== null && q < 0.15) input = { ...prior, attempt: randomUUID() }
      else if (prior !== null && q < 0.22) input = { ...prior, attempt: randomUUID(), debitAmount: prior.debitAmount + 1, fingerprint: `${prior.fingerprint}x` }
      else {
        const debit = amount()
        input = authInput(urn, { debitAmount: debit, fingerprint: `fp${debit}`, last4: pick(['1111', '2222']), limits: rnd() < 0.5 ? [lim, amtLim] : [] })
        if (rnd() < 0.1) input.deadlineAtMs = Date.now() - 10 // a commit that lands late
      }
      return async () => {
        const res = await store.authorize(input)
        if (!m.inputs.includes(input) && !res.replayed && res.reason !== 'conflict') m.inputs.push(input)
        if (res.code === '00' && !res.replayed) {
          m.held += input.debitAmount
          m.approvals.set(input.reference, { input, held: input.debitAmount })
        }
        return { what: `authorize ${input.debitAmount} → ${res.code} ${res.reason}${res.replayed ? ' replayed' : ''}`, noChange: res.code !== '00' || res.replayed }
      }
    }
    if (r < 0.82) {
      const approvals = [...m.approvals.values()]
      const target = approvals.length > 0 && rnd() < 0.8 ? pick(approvals) : null
      const ref = target?.input.reference ?? randomUUID()
      const amt = target !== null && rnd() < 0.5 ? Math.max(1, Math.floor(target.held * rnd())) : null
      return async () => {
        try {
          const res = await store.reverse(urn, ref, amt)
          if (!res.replayed) {
            m.released += res.released
            const a = m.approvals.get(ref)
            if (a !== undefined) a.held -= res.released
          }
          return { what: `reverse ${amt ?? 'all'}: released ${res.released}${res.replayed ? ' replayed' : ''}`, noChange: res.replayed }
        } catch (err) {
          if (err instanceof StoreRejection) return { what: `reverse rejected ${err.code}`, noChange: true }
          throw err
        }
      }
    }
    // a deadline miss: the guard's compensation, for an attempt that committed or one that has not run yet
    const approvals = [...m.approvals.values()]
    const target = approvals.length > 0 && rnd() < 0.6 ? pick(approvals) : null
    const input = target?.input ?? authInput(urn, { debitAmount: amount(), limits: [lim] })
    const attempt = rnd() < 0.85 ? input.attempt : randomUUID()
    return async () => {
      const outcome = await store.abandon(abandonInputOf({ ...input, attempt }))
      if (outcome === 'released') {
        const a = m.approvals.get(input.reference)
        if (a !== undefined) {
          m.released += a.held
          a.held = 0
          m.approvals.delete(input.reference)
        }
      } else if (outcome === 'tombstoned') {
        m.inputs.push(input)
      }
      return { what: `abandon → ${outcome}`, noChange: outcome !== 'released' }
    }
  }

  async function check (step: number, what: string): Promise<void> {
    for (const urn of urns) {
      const m = models.get(urn) as Model
      const c = await store.getCustomer(urn)
      const available = c?.available ?? NaN
      const expected = m.credits - m.debits - m.held + m.released
      if (available !== expected || available < 0) {
        t.fail(`seed ${seed}, step ${step} (${what}): ${urn} available ${available}, model ${expected} (credits ${m.credits} debits ${m.debits} held ${m.held} released ${m.released})`)
        throw new Error(`invariant broken; rerun with TEST_SEED=${seed}`)
      }
    }
  }

  let checks = 0
  for (let step = 0; step < steps; step++) {
    if (rnd() < 0.15) {
      // a concurrent batch: results land in any order; the sums must still agree
      const ops = Array.from({ length: 8 }, () => makeOp(pick(urns)))
      const done = await Promise.all(ops.map(async (op) => await op()))
      await check(step, `batch: ${done.map((d) => d.what).join('; ')}`)
    } else {
      const urn = pick(urns)
      const before = new Map<string, number>()
      for (const u of urns) before.set(u, (await store.getCustomer(u))?.available ?? NaN)
      const { what, noChange } = await makeOp(urn)()
      await check(step, what)
      if (noChange) {
        const after = (await store.getCustomer(urn))?.available
        if (after !== before.get(urn)) {
          t.fail(`seed ${seed}, step ${step} (${what}): a rejected operation changed ${urn} from ${String(before.get(urn))} to ${String(after)}`)
          throw new Error(`invariant broken; rerun with TEST_SEED=${seed}`)
        }
      }
    }
    checks++
  }
  // the store's own records agree with the model: what approvals still hold
  for (const urn of urns) {
    const m = models.get(urn) as Model
    let heldInRecords = 0
    for (const ref of m.approvals.keys()) heldInRecords += Number((await store.getDecision(urn, ref))?.held ?? 0)
    t.equal(heldInRecords, m.held - m.released, `seed ${seed}: ${urn} holds in decision records = held − released`)
  }
  t.pass(`seed ${seed}: ${checks} steps, invariants held after each`)
}

const seed = Number(process.env.TEST_SEED ?? Math.floor(Math.random() * 2 ** 31))
t.comment(`seed ${seed} (TEST_SEED=${seed} reruns it)`)

t.test('memory store', async (t) => { await run(t, new MemoryStore(), seed, 1500) })
t.test('redis store', async (t) => { await run(t, await sharedRedisStore(t), seed, 700) })
// authorize as a script sent with EVALSHA, where Redis has no functions (src/store/functions.ts)
t.test('redis store, authorize with EVALSHA', async (t) => { await run(t, await sharedRedisStore(t, undefined, { functions: false }), seed, 700) })
