// The store contract: what the decision pipeline and the admin API rely on. Run on both stores
// (memory.test.ts, redis.test.ts).
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import type { AuthorizeInput, Store } from '../../src/store/types.js'
import type { LimitCheck } from '../../src/domain/rule-hits.js'
import { StoreRejection } from '../../src/errors.js'
import { controlsContract } from './controls-contract.js'

export type MakeStore = (t: Test) => Promise<Store>

let n = 0
export function urnFor (tag: string): string {
  return `U${tag}${process.pid}${++n}`.slice(0, 20)
}

export function authInput (urn: string, over: Partial<AuthorizeInput> = {}): AuthorizeInput {
  const now = Date.now()
  return {
    urn,
    last4: '4321',
    reference: `R${randomUUID()}`,
    attempt: randomUUID(),
    debitAmount: 100,
    fingerprint: 'fp-100-4321',
    nowMs: now,
    deadlineAtMs: now + 5000,
    decline: null,
    limits: [],
    meta: { rulesVersion: 'v1', shadowHits: [], transactionAmount: '100', currencyCode: '356', channel: 'POS' },
    ...over
  }
}

export function limit (over: Partial<LimitCheck> = {}): LimitCheck {
  return {
    ruleId: 'lim',
    mode: 'enforce',
    measure: 'count',
    per: 'urn',
    windowStartMs: Date.now() - 3_600_000,
    retainMs: 3_600_000,
    max: 2,
    code: '65',
    values: {},
    ...over
  }
}

export async function funded (store: Store, amount: number, tag = 'c'): Promise<string> {
  const urn = urnFor(tag)
  await store.putCustomer(urn, { customerId: 'C1' })
  if (amount > 0) await store.credit(urn, amount, `seed-${urn}`)
  return urn
}

export async function rejectionCode (p: Promise<unknown>): Promise<string> {
  try {
    await p
  } catch (err) {
    if (err instanceof StoreRejection) return err.word
    throw err
  }
  return 'none'
}

export function storeContract (t: Test, make: MakeStore): void {
  controlsContract(t, make, authInput, urnFor)

  t.test('unknown urn: 14, replayed on retry, nothing created', async (t) => {
    const store = await make(t)
    const urn = urnFor('u')
    const input = authInput(urn)
    const r = await store.authorize(input)
    t.match(r, { code: '14', reason: 'unknown_urn', replayed: false })
    t.match(await store.authorize(input), { code: '14', replayed: true })
    t.equal(await store.getCustomer(urn), null)
  })

  t.test('customer and card states', async (t) => {
    const store = await make(t)
    const cases: Array<[string, () => Promise<string>, string, string]> = [
      ['blocked customer', async () => { const u = await funded(store, 1000); await store.putCustomer(u, { status: 'BLOCKED' }); return u }, '05', 'customer_blocked'],
      ['closed customer', async () => { const u = await funded(store, 1000); await store.putCustomer(u, { status: 'CLOSED' }); return u }, '05', 'customer_closed'],
      ['lost card', async () => { const u = await funded(store, 1000); await store.putCard(u, '4321', 'LOST'); return u }, '41', 'card_lost'],
      ['stolen card', async () => { const u = await funded(store, 1000); await store.putCard(u, '4321', 'STOLEN'); return u }, '43', 'card_stolen'],
      ['blocked card', async () => { const u = await funded(store, 1000); await store.putCard(u, '4321', 'BLOCKED'); return u }, '05', 'card_blocked'],
      ['card not registered', async () => { const u = await funded(store, 1000); await store.putCard(u, '9999', 'ACTIVE'); return u }, '14', 'card_unknown'],
      ['active card', async () => { const u = await funded(store, 1000); await store.putCard(u, '4321', 'ACTIVE'); return u }, '00', 'approved'],
      ['no cards registered', async () => await funded(store, 1000), '00', 'approved']
    ]
    for (const [name, setup, code, reason] of cases) {
      const urn = await setup()
      const r = await store.authorize(authInput(urn))
      t.match(r, { code, reason }, name)
      const c = await store.getCustomer(urn)
      t.equal(c?.available, code === '00' ? 900 : 1000, `${name}: balance`)
    }
  })

  t.test('funds: the debit is held; more than available is 51 and changes nothing', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 250)
    t.match(await store.authorize(authInput(urn, { debitAmount: 200 })), { code: '00', available: 50 })
    const declined = authInput(urn, { debitAmount: 51 })
    t.match(await store.authorize(declined), { code: '51', reason: 'insufficient_funds' })
    t.equal((await store.getCustomer(urn))?.available, 50)
    t.match(await store.getDecision(urn, declined.reference), { code: '51', held: '0' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 50 })), { code: '00', available: 0 })
  })

  t.test('idempotency: a replay debits once; another amount or card is a conflict', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const input = authInput(urn, { debitAmount: 300, fingerprint: 'a' })
    t.match(await store.authorize(input), { code: '00', replayed: false })
    t.match(await store.authorize({ ...input, attempt: randomUUID() }), { code: '00', replayed: true })
    t.match(await store.authorize({ ...input, attempt: randomUUID(), debitAmount: 999, fingerprint: 'b' }), { code: '05', reason: 'conflict', replayed: false })
    t.equal((await store.getCustomer(urn))?.available, 700)
    t.match(await store.getDecision(urn, input.reference), { code: '00', held: '300', fingerprint: 'a' })
    const stream = (await store.readDecisionStream(urn)).filter((e) => e.type === 'decision.created')
    t.equal(stream.length, 1, 'a replay and a conflict change nothing, so they write no event')
  })

  t.test('a stateless rule decline: its code and rule, nothing held', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const input = authInput(urn, { decline: { ruleId: 'block-gambling', code: '05', mode: 'enforce', values: { mcc: '7995' } } })
    t.match(await store.authorize(input), { code: '05', reason: 'rule', ruleId: 'block-gambling' })
    t.equal((await store.getCustomer(urn))?.available, 1000)
    // customer state comes first: a lost card answers 41 even when a rule declines
    await store.putCard(urn, '4321', 'LOST')
    t.match(await store.authorize({ ...input, reference: 'other' }), { code: '41' })
  })

  t.test('count limit: never more than max approvals in the window', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 10_000)
    const lim = limit({ max: 2 })
    const codes = []
    for (let i = 0; i < 4; i++) codes.push((await store.authorize(authInput(urn, { limits: [lim] }))).code)
    t.same(codes, ['00', '00', '65', '65'])
    t.equal((await store.getCustomer(urn))?.available, 9800)
  })

  t.test('amount limit, per card against per urn, and the rolling window', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 10_000)
    const now = Date.now()
    const perCard = (start: number): LimitCheck => limit({ ruleId: 'amt', measure: 'amount', per: 'card', max: 500, code: '61', windowStartMs: start })
    t.match(await store.authorize(authInput(urn, { debitAmount: 400, nowMs: now - 10_000, limits: [perCard(now - 20_000)] })), { code: '00' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 200, nowMs: now, limits: [perCard(now - 20_000)] })), { code: '61', reason: 'limit', ruleId: 'amt' })
    t.match(await store.authorize(authInput(urn, { last4: '1111', debitAmount: 200, nowMs: now, limits: [perCard(now - 20_000)] })), { code: '00' }, 'another card has its own window')
    t.match(await store.authorize(authInput(urn, { debitAmount: 200, nowMs: now, limits: [perCard(now - 5_000)] })), { code: '00' }, 'the first entry left the window')
    const perUrn = limit({ ruleId: 'amt-urn', measure: 'amount', per: 'urn', max: 100, code: '61', windowStartMs: now - 20_000 })
    t.match(await store.authorize(authInput(urn, { debitAmount: 101, limits: [perUrn] })), { code: '61' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 100, limits: [perUrn] })), { code: '00' })
  })

  t.test('limits come before funds; shadow limits never decline', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 100)
    const shadow = limit({ ruleId: 'sh', mode: 'shadow', max: 0 })
    const r = await store.authorize(authInput(urn, { debitAmount: 50, limits: [shadow] }))
    t.match(r, { code: '00' })
    t.same(r.shadowLimitHits, ['sh'])
    const enforce = limit({ ruleId: 'en', max: 0, code: '65' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 500, limits: [enforce] })), { code: '65' }, 'the limit answers, not the funds')
  })

  t.test('past the deadline the store commits nothing and records a 05', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const input = authInput(urn, { deadlineAtMs: Date.now() - 1000, limits: [limit({ max: 5 })] })
    t.match(await store.authorize(input), { code: '05', reason: 'deadline' })
    t.equal((await store.getCustomer(urn))?.available, 1000)
    t.match(await store.getDecision(urn, input.reference), { code: '05', answeredOnDeadline: true, decidedCode: '00', held: '0', limitEntries: [] })
  })

  t.test('abandon after an approval releases the hold and the counters, once', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const lim = limit({ max: 1 })
    const input = authInput(urn, { debitAmount: 300, limits: [lim] })
    t.match(await store.authorize(input), { code: '00' })
    const abandon = { urn, reference: input.reference, attempt: input.attempt, fingerprint: input.fingerprint, limits: [lim], last4: input.last4, arrivedAtMs: input.nowMs, deadlineAtMs: input.deadlineAtMs }
    t.equal(await store.abandon({ ...abandon, attempt: 'someone-else' }), 'untouched', 'another attempt cannot undo it')
    t.equal(await store.abandon(abandon), 'released')
    t.equal(await store.abandon(abandon), 'untouched')
    t.equal((await store.getCustomer(urn))?.available, 1000)
    t.match(await store.getDecision(urn, input.reference), { code: '05', reason: 'deadline', decidedCode: '00', held: '0', released: '300' })
    t.match(await store.authorize({ ...input, attempt: randomUUID() }), { code: '05', replayed: true }, 'a retry of the reference gets the 05 it was answered')
    t.match(await store.authorize(authInput(urn, { limits: [lim] })), { code: '00' }, 'the count was released')
  })

  t.test('a replay owns the decision: the first attempt late compensation cannot undo what the replay answered', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const a = authInput(urn, { debitAmount: 300 })
    const b = { ...a, attempt: randomUUID() }
    const abandonOf = (i: AuthorizeInput) => ({ urn, reference: i.reference, attempt: i.attempt, fingerprint: i.fingerprint, limits: i.limits, last4: i.last4, arrivedAtMs: i.nowMs, deadlineAtMs: i.deadlineAtMs })
    t.match(await store.authorize(a), { code: '00' })
    t.match(await store.authorize(b), { code: '00', replayed: true }, 'the retry is answered 00')
    t.equal(await store.abandon(abandonOf(a)), 'untouched', 'the first attempt, answered 05 by its guard, no longer owns it')
    t.equal((await store.getCustomer(urn))?.available, 700, 'the 00 the platform last heard stays held')
    t.equal(await store.abandon(abandonOf(b)), 'released', 'had the retry been late too, its own compensation releases')
    t.equal((await store.getCustomer(urn))?.available, 1000)
    t.match(await store.authorize({ ...a, attempt: randomUUID() }), { code: '05', replayed: true }, 'and a further retry hears the 05')
  })

  t.test('abandon before the authorize leaves a tombstone; the late authorize commits nothing', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const input = authInput(urn, { limits: [limit({ max: 1 })] })
    t.equal(await store.abandon({ urn, reference: input.reference, attempt: input.attempt, fingerprint: input.fingerprint, limits: input.limits, last4: input.last4, arrivedAtMs: input.nowMs, deadlineAtMs: input.deadlineAtMs }), 'tombstoned')
    t.match(await store.authorize(input), { code: '05', reason: 'deadline', replayed: true })
    t.equal((await store.getCustomer(urn))?.available, 1000)
    t.match(await store.authorize(authInput(urn, { limits: input.limits })), { code: '00' }, 'no counter was taken')
  })

  t.test('reversal: whole or part, once', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const a = authInput(urn, { debitAmount: 400, limits: [limit({ ruleId: 'amt', measure: 'amount', max: 600, code: '61' })] })
    await store.authorize(a)
    t.match(await store.reverse(urn, a.reference, 150), { replayed: false, released: 150, available: 750 })
    t.match(await store.reverse(urn, a.reference, 150), { replayed: true, released: 150, available: 750 })
    t.equal(await rejectionCode(store.reverse(urn, a.reference, null)), 'ALREADY_REVERSED')
    t.match(await store.getDecision(urn, a.reference), { held: '250', released: '150', reversal: { amount: '150' } })
    // the window now counts 250 of the 400
    t.match(await store.authorize(authInput(urn, { debitAmount: 350, limits: a.limits })), { code: '00' })
    const b = authInput(urn, { debitAmount: 100 })
    await store.authorize(b)
    t.equal(await rejectionCode(store.reverse(urn, b.reference, 101)), 'EXCEEDS_HOLD')
    t.match(await store.reverse(urn, b.reference, null), { released: 100 })
    const declined = authInput(urn, { debitAmount: 999_999 })
    await store.authorize(declined)
    t.equal(await rejectionCode(store.reverse(urn, declined.reference, null)), 'NOT_APPROVED')
    t.equal(await rejectionCode(store.reverse(urn, 'nope', null)), 'DECISION_NOT_FOUND')
    t.equal((await store.getCustomer(urn))?.available, 1000 - 250 - 350)
  })

  t.test('credits and debits: idempotent on the reference, never below zero', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 0)
    t.match(await store.credit(urn, 500, 'c1'), { replayed: false, available: 500 })
    t.match(await store.credit(urn, 500, 'c1'), { replayed: true, available: 500 })
    t.equal(await rejectionCode(store.credit(urn, 501, 'c1')), 'REFERENCE_CONFLICT')
    t.equal(await rejectionCode(store.debit(urn, 501, 'd1')), 'INSUFFICIENT_FUNDS')
    t.match(await store.debit(urn, 200, 'd1'), { replayed: false, available: 300 })
    t.match(await store.debit(urn, 200, 'd1'), { replayed: true, available: 300 })
    t.match(await store.debit(urn, 200, 'c1'), { available: 100 }, 'credits and debits have their own references')
    t.equal(await rejectionCode(store.credit(urnFor('none'), 1, 'x')), 'CUSTOMER_NOT_FOUND')
    t.equal(await rejectionCode(store.credit(urn, Number.MAX_SAFE_INTEGER, 'big')), 'BALANCE_LIMIT')
    t.equal((await store.getCustomer(urn))?.available, 100)
  })

  t.test('a completion is recorded once with its event and moves no money', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 700)
    const event = { type: 'unload.completed' as const, details: { clientTxnId: 'UL1', amount: '500', fee: '7' } }
    t.match(await store.recordCompletion(urn, 'unload:UL1:completed', event), { replayed: false, available: 700 })
    t.match(await store.recordCompletion(urn, 'unload:UL1:completed', event), { replayed: true, available: 700 })
    t.match(await store.credit(urn, 5, 'unload:UL1:completed'), { replayed: false, available: 705 }, 'a reference of its own kind')
    t.equal(await rejectionCode(store.recordCompletion(urnFor('none'), 'x', event)), 'CUSTOMER_NOT_FOUND')
    const events = (await store.readDecisionStream(urn)).filter((e) => e.urn === urn && e.type === 'unload.completed')
    t.same(events.map(({ id: _id, ...e }) => e), [{ type: 'unload.completed', urn, reference: 'unload:UL1:completed', available: '700', clientTxnId: 'UL1', amount: '500', fee: '7' }], 'one event, with the details')
  })

  t.test('customers and cards', async (t) => {
    const store = await make(t)
    const urn = urnFor('k')
    t.equal(await rejectionCode(store.putCard(urn, '1234', 'ACTIVE')), 'CUSTOMER_NOT_FOUND')
    t.match(await store.putCustomer(urn, {}), { urn, customerId: null, status: 'ACTIVE', available: 0, cards: {} })
    t.match(await store.putCustomer(urn, { customerId: 'X9', status: 'BLOCKED' }), { customerId: 'X9', status: 'BLOCKED' })
    t.match(await store.putCustomer(urn, { status: 'ACTIVE' }), { customerId: 'X9', status: 'ACTIVE' }, 'a patch keeps what it does not name')
    t.same((await store.putCard(urn, '1234', 'LOST')).cards, { 1234: 'LOST' })
  })

  t.test('lifecycle records: created once, read back, replaced; locks are exclusive', async (t) => {
    const store = await make(t)
    const id = `L${randomUUID()}`
    t.same(await store.createLifecycle('load', id, { status: 'OTP_SENT', n: 1 }), { created: true, value: { status: 'OTP_SENT', n: 1 } })
    t.same(await store.createLifecycle('load', id, { status: 'OTHER', n: 2 }), { created: false, value: { status: 'OTP_SENT', n: 1 } })
    t.equal(await store.getLifecycle('transfer', id), null, 'kinds are apart')
    await store.putLifecycle('load', id, { status: 'LOADED', n: 3 })
    t.same(await store.getLifecycle('load', id), { status: 'LOADED', n: 3 })
    t.equal(await store.lockLifecycle('load', id, 5000, 'owner-1'), true)
    t.equal(await store.lockLifecycle('load', id, 5000, 'owner-2'), false)
    t.equal(await store.unlockLifecycle('load', id, 'owner-2'), false, 'only the owner releases')
    t.equal(await store.lockLifecycle('load', id, 5000, 'owner-2'), false, 'still held by its owner')
    t.equal(await store.unlockLifecycle('load', id, 'owner-1'), true)
    t.equal(await store.lockLifecycle('load', id, 5000, 'owner-2'), true)
    await store.unlockLifecycle('load', id, 'owner-2')
  })

  t.test('a holder whose lock expired cannot release the lock a later caller took', async (t) => {
    const store = await make(t)
    const id = `L${randomUUID()}`
    t.equal(await store.lockLifecycle('transfer', id, 1, 'slow'), true)
    // wait for the expiry itself, not for a time: the second caller gets the lock once it has expired
    let taken = false
    for (let i = 0; i < 500 && !taken; i++) {
      taken = await store.lockLifecycle('transfer', id, 60_000, 'second')
      if (!taken) await new Promise((resolve) => setTimeout(resolve, 2))
    }
    t.ok(taken, 'the expired lock was taken')
    t.equal(await store.unlockLifecycle('transfer', id, 'slow'), false, 'the first holder releases nothing')
    t.equal(await store.lockLifecycle('transfer', id, 60_000, 'third'), false, 'the second holder still holds it')
    t.equal(await store.unlockLifecycle('transfer', id, 'second'), true)
  })

  t.test('the decision stream holds every decision of the bucket', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 150)
    await store.authorize(authInput(urn))
    await store.authorize(authInput(urn))
    const stream = (await store.readDecisionStream(urn)).filter((e) => e.urn === urn && e.type === 'decision.created')
    t.same(stream.map((e) => e.code), ['00', '51'])
  })
}
