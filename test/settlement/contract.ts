// The settlement contract, run on both stores (memory.test.ts, redis.test.ts): each row of the outcomes
// table (docs/operations/settlement.md), holds and their expiry, exceptions and their resolution.
import type { Test } from 'tap'
import { abandonInputOf, type Store } from '../../src/store/types.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import { expireDue } from '../../src/settlement/expiry.js'
import { resolveException } from '../../src/settlement/resolve.js'
import type { Posting, PostingType } from '../../src/settlement/types.js'
import { authInput, funded, limit, urnFor } from '../store/contract.js'
import { Keys } from '../../src/store/keys.js'

export type MakeStore = (t: Test) => Promise<Store>

let pid = 0
export function posting (urn: string, type: PostingType, reference: string, amount: number, over: Partial<Posting> = {}): Posting {
  return { platformId: `P${process.pid}x${++pid}`, type, reference, urn, last4: '4321', amount, currency: '356', postedAt: '2026-11-20T10:00:00Z', ...over }
}

async function balances (store: Store, urn: string): Promise<{ available: number, held: number, ledger: number }> {
  const c = await store.getCustomer(urn)
  if (c === null) throw new Error(`no customer ${urn}`)
  return { available: c.available, held: c.held, ledger: c.available + c.held }
}

/** an approval in holds mode (expiring at `expiresAtMs`) or final (undefined) */
async function approve (store: Store, urn: string, amount: number, expiresAtMs?: number, over: Parameters<typeof authInput>[1] = {}): Promise<string> {
  const input = authInput(urn, { debitAmount: amount, fingerprint: `fp-${amount}`, ...(expiresAtMs !== undefined ? { holdExpiresAtMs: expiresAtMs } : {}), ...over })
  const r = await store.authorize(input)
  if (r.code !== '00') throw new Error(`not approved: ${r.code} ${r.reason}`)
  return input.reference
}

/** the decision of (urn, reference) forgotten, as past its retention (the hold index keeps its hold) */
async function forget (store: Store, urn: string, reference: string): Promise<void> {
  if ('client' in store) {
    const redis = store as unknown as { keys: Keys, client: { del: (k: string) => Promise<number> } }
    await redis.client.del(redis.keys.decision(urn, reference))
  } else (store as unknown as { decisions: Map<string, unknown> }).decisions.delete(new Keys('').decision(urn, reference))
}

/** a customer of 10,000 with a hold of 2,500 due in a second, whose decision is already forgotten */
async function forgottenHold (t: Test, make: MakeStore): Promise<{ store: Store, s: ReturnType<typeof settlementFor>, urn: string, at: number, ref: string }> {
  const store = await make(t)
  const s = settlementFor(store)
  const urn = await funded(store, 10_000)
  const at = Date.now() + 1000
  const ref = await approve(store, urn, 2500, at)
  await forget(store, urn, ref)
  return { store, s, urn, at, ref }
}

export function settlementContract (t: Test, make: MakeStore): void {
  const later = (): number => Date.now() + 3_600_000

  t.test('holds mode: an approval is held, not posted; the customer shows available, held and ledger', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 10_000)
    await approve(store, urn, 2500, later())
    t.same(await balances(store, urn), { available: 7500, held: 2500, ledger: 10_000 })
  })

  t.test('a hold\'s decision is kept past its expiry by the retention; a decline in holds mode as long as ever', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const expires = Date.now() + 31 * 86_400_000
    const ref = await approve(store, urn, 500, expires)
    const kept = (await store.getDecision(urn, ref))?.expiresAtMs ?? 0
    t.ok(kept >= expires + 7 * 86_400_000, 'kept past the hold\'s expiry')
    const declined = authInput(urn, { debitAmount: 5000, fingerprint: 'd', holdExpiresAtMs: expires })
    t.equal((await store.authorize(declined)).code, '51')
    const short = (await store.getDecision(urn, declined.reference))?.expiresAtMs ?? Infinity
    t.ok(short < Date.now() + 10 * 86_400_000, 'a decline holds nothing and is kept the usual time')
  })

  t.test('final mode: an approval debits as before, nothing held', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 10_000)
    await approve(store, urn, 2500)
    t.same(await balances(store, urn), { available: 7500, held: 0, ledger: 7500 })
  })

  t.test('cleared: a purchase of the authorized amount posts the hold (holds) / changes nothing (final)', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const held = await approve(store, urn, 2500, later())
    const final = await approve(store, urn, 1000)
    const a = await s.applyPosting(posting(urn, 'purchase', held, 2500), 'S1', null)
    t.equal(a.outcome, 'cleared')
    t.same(a.exceptions, [])
    const b = await s.applyPosting(posting(urn, 'purchase', final, 1000), 'S1', null)
    t.equal(b.outcome, 'cleared')
    t.same(await balances(store, urn), { available: 6500, held: 0, ledger: 6500 })
    // a reversal of a posted authorization finds nothing held
    const rec = await store.getDecision(urn, held)
    t.equal(rec?.held, '0')
    // expiry later finds nothing to release
    t.equal(await expireDue(s, later() + 1), 0)
    t.same(await balances(store, urn), { available: 6500, held: 0, ledger: 6500 })
  })

  t.test('cleared_partial: the rest is released, limit windows and daily totals given the rest back', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const lim = limit({ measure: 'amount', max: 3000 })
    const ref = await approve(store, urn, 2500, later(), { limits: [lim] })
    const r = await s.applyPosting(posting(urn, 'purchase', ref, 2000), 'S1', null)
    t.equal(r.outcome, 'cleared_partial')
    t.same(await balances(store, urn), { available: 8000, held: 0, ledger: 8000 })
    // the window counts the 2000 posted: 1000 more passes, 1001 does not
    const ok = await store.authorize(authInput(urn, { debitAmount: 1000, fingerprint: 'a', limits: [lim] }))
    t.equal(ok.code, '00')
    const over = await store.authorize(authInput(urn, { debitAmount: 1, fingerprint: 'b', limits: [lim] }))
    t.equal(over.code, '65')
  })

  t.test('cleared_over: the difference is debited even below zero, with a negative_balance exception', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 3000)
    const ref = await approve(store, urn, 2500, later())
    const r = await s.applyPosting(posting(urn, 'purchase', ref, 4000), 'S1', null)
    t.equal(r.outcome, 'cleared_over')
    t.same(await balances(store, urn), { available: -1000, held: 0, ledger: -1000 })
    t.equal(r.exceptions.length, 1)
    const x = await s.getException(r.exceptions[0] as string)
    t.equal(x?.kind, 'negative_balance')
    t.equal(x?.amount, '1000')
  })

  t.test('several clearings post against one authorization', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const ref = await approve(store, urn, 3000, later())
    t.equal((await s.applyPosting(posting(urn, 'purchase', ref, 1000), 'S1', null)).outcome, 'cleared_partial')
    t.same(await balances(store, urn), { available: 9000, held: 0, ledger: 9000 })
    t.equal((await s.applyPosting(posting(urn, 'purchase', ref, 2000), 'S1', null)).outcome, 'cleared')
    t.same(await balances(store, urn), { available: 7000, held: 0, ledger: 7000 })
  })

  t.test('expiry releases the hold once, with its window entries; a clearing after it posts again (late_clearing)', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const lim = limit({ measure: 'count', max: 1 })
    const at = Date.now() + 1000
    const ref = await approve(store, urn, 2500, at, { limits: [lim] })
    t.equal(await expireDue(s, at - 1), 0, 'not due before its time')
    t.equal(await expireDue(s, at), 1)
    t.equal(await expireDue(s, at + 10), 0, 'never twice')
    t.same(await balances(store, urn), { available: 10_000, held: 0, ledger: 10_000 })
    // the count window has its entry back
    t.equal((await store.authorize(authInput(urn, { debitAmount: 1, fingerprint: 'x', limits: [lim] }))).code, '00')
    const events = (await store.readDecisionStream(urn)).filter((e) => e.type === 'authorization.expired')
    t.equal(events.length, 1)
    const r = await s.applyPosting(posting(urn, 'purchase', ref, 2500), 'S1', null)
    t.equal(r.outcome, 'late_clearing')
    t.equal((await s.getException(r.exceptions[0] as string))?.kind, 'late_clearing')
    t.same(await balances(store, urn), { available: 7499, held: 0, ledger: 7499 })
  })

  t.test('a reference authorized again after its held decision is forgotten: the old hold is released, then the new one held', async (t) => {
    const { store, s, urn, at, ref } = await forgottenHold(t, make)
    t.equal(await store.getDecision(urn, ref), null, 'the decision is forgotten')
    t.same(await balances(store, urn), { available: 7500, held: 2500, ledger: 10_000 }, 'its hold still held')
    // the same reference again: a new decision (not a replay) and a new hold of its own
    const again = await store.authorize(authInput(urn, { reference: ref, debitAmount: 1200, fingerprint: 'again', holdExpiresAtMs: at }))
    t.equal(again.code, '00')
    t.equal(again.replayed, false)
    t.equal(again.available, 8800, 'the old hold given back, the new one taken')
    t.same(await balances(store, urn), { available: 8800, held: 1200, ledger: 10_000 })
    const released = (await store.readDecisionStream(urn)).filter((e) => e.type === 'authorization.expired')
    t.equal(released.length, 1, 'the old hold released once, as expiry would')
    t.match(released[0], { reference: ref, last4: '4321', released: '2500', available: '10000', held: '0' })
    // expiry then releases the new hold only
    t.equal(await expireDue(s, at + 10), 1)
    t.equal(await expireDue(s, at + 20), 0, 'never twice')
    t.same(await balances(store, urn), { available: 10_000, held: 0, ledger: 10_000 })
  })

  t.test('a reference authorized again on another card after its held decision is forgotten: expiry releases the old hold, not the new', async (t) => {
    const { store, s, urn, at, ref } = await forgottenHold(t, make)
    // the same reference on another card: a new decision with a hold of its own, due later
    const again = await store.authorize(authInput(urn, { reference: ref, last4: '8765', debitAmount: 1200, fingerprint: 'other-card', holdExpiresAtMs: later() }))
    t.equal(again.code, '00')
    t.equal(again.replayed, false)
    t.same(await balances(store, urn), { available: 6300, held: 3700, ledger: 10_000 }, 'both held')
    t.equal(await expireDue(s, at + 10), 1, 'the old hold is due')
    t.same(await balances(store, urn), { available: 8800, held: 1200, ledger: 10_000 }, 'the old hold given back, the new one still held')
    const released = (await store.readDecisionStream(urn)).filter((e) => e.type === 'authorization.expired')
    t.equal(released.length, 1)
    t.match(released[0], { reference: ref, last4: '4321', released: '2500', available: '8800', held: '1200' })
    t.match(await store.getDecision(urn, ref), { last4: '8765', held: '1200', released: '0' }, 'the new decision untouched')
    // the new authorization clears as itself (not late: it never expired)
    const cleared = await s.applyPosting(posting(urn, 'purchase', ref, 1200, { last4: '8765' }), 'S1', null)
    t.equal(cleared.outcome, 'cleared')
    t.same(await balances(store, urn), { available: 8800, held: 0, ledger: 8800 })
    t.equal(await expireDue(s, later() + 10), 0, 'nothing left to expire')
  })

  t.test('a reference held on two customers: one\'s forgotten hold expires, the other\'s stays', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const a = await funded(store, 10_000, 'a')
    const b = await funded(store, 10_000, 'b')
    const at = Date.now() + 1000
    const ref = await approve(store, a, 2500, at)
    await approve(store, b, 1200, later(), { reference: ref })
    await forget(store, a, ref)
    t.equal(await expireDue(s, at + 10), 1)
    t.same(await balances(store, a), { available: 10_000, held: 0, ledger: 10_000 })
    t.same(await balances(store, b), { available: 8800, held: 1200, ledger: 10_000 }, 'the other customer\'s hold untouched')
    t.match(await store.getDecision(b, ref), { held: '1200' })
  })

  t.test('a deadline tombstone under the reference of a forgotten hold: expiry releases that hold', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const at = Date.now() + 1000
    const ref = await approve(store, urn, 2500, at)
    const decidedAtMs = (await store.getDecision(urn, ref))?.decidedAtMs ?? Infinity
    await forget(store, urn, ref)
    // the tombstone is another decision of the same card: decided at a later millisecond, as it always is
    // past a decision's retention
    while (Date.now() <= decidedAtMs) await new Promise((resolve) => setImmediate(resolve))
    const attempt = authInput(urn, { reference: ref, debitAmount: 2500, fingerprint: 'late' })
    t.equal(await store.abandon(abandonInputOf(attempt)), 'tombstoned')
    t.match(await store.getDecision(urn, ref), { code: '05', held: '0' })
    t.equal(await expireDue(s, at + 10), 1)
    t.same(await balances(store, urn), { available: 10_000, held: 0, ledger: 10_000 }, 'the forgotten hold given back')
    t.match((await store.readDecisionStream(urn)).filter((e) => e.type === 'authorization.expired'), [{ reference: ref, last4: '4321', released: '2500' }])
  })

  t.test('expiry in many at once expires each hold once', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 100_000)
    const at = Date.now() + 500
    for (let i = 0; i < 30; i++) await approve(store, urn, 100 + i, at)
    const runs = await Promise.all([expireDue(s, at, 7), expireDue(s, at, 7), expireDue(s, at, 7)])
    t.equal(runs.reduce((a, b) => a + b, 0), 30)
    t.same(await balances(store, urn), { available: 100_000, held: 0, ledger: 100_000 })
  })

  t.test('a reversal of a hold releases it from held and from the index', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const at = Date.now() + 500
    const ref = await approve(store, urn, 2500, at)
    await store.reverse(urn, ref, 500)
    t.same(await balances(store, urn), { available: 8000, held: 2000, ledger: 10_000 })
    await store.reverse(urn, ref, null).catch(() => null)
    const ref2 = await approve(store, urn, 1000, at)
    await store.reverse(urn, ref2, null)
    t.same(await balances(store, urn), { available: 10_000 - 2000, held: 2000, ledger: 10_000 })
    t.equal(await expireDue(s, at), 1, 'only the part still held expires')
    t.same(await balances(store, urn), { available: 10_000, held: 0, ledger: 10_000 })
  })

  t.test('force_post, declined_here: debited, with an exception', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 1000)
    const fp = await s.applyPosting(posting(urn, 'purchase', 'NO-SUCH', 300), 'S1', null)
    t.equal(fp.outcome, 'force_post')
    t.equal((await s.getException(fp.exceptions[0] as string))?.kind, 'force_post')
    const declined = authInput(urn, { debitAmount: 5000, fingerprint: 'big' })
    t.equal((await store.authorize(declined)).code, '51')
    const dh = await s.applyPosting(posting(urn, 'purchase', declined.reference, 200), 'S1', null)
    t.equal(dh.outcome, 'declined_here')
    t.same(await balances(store, urn), { available: 500, held: 0, ledger: 500 })
  })

  t.test('a line that names another card than the authorization\'s: no authorization of that card', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const ref = await approve(store, urn, 2500, later(), { last4: '4321' })
    // the same reference cleared on card 9999: a force post, and the hold of card 4321 untouched
    const other = await s.applyPosting(posting(urn, 'purchase', ref, 2500, { last4: '9999' }), 'S1', null)
    t.equal(other.outcome, 'force_post')
    t.match(await s.getException(other.exceptions[0] as string), { kind: 'force_post', last4: '9999', detail: /card 9999 .*card 4321/ })
    t.same(await balances(store, urn), { available: 5000, held: 2500, ledger: 7500 }, 'debited; the hold still held')
    // a reversal on card 9999 releases nothing of card 4321's hold: money back as for no authorization
    t.equal((await s.applyPosting(posting(urn, 'reversal', ref, 1000, { last4: '9999' }), 'S1', null)).outcome, 'reversal')
    t.same(await balances(store, urn), { available: 6000, held: 2500, ledger: 8500 })
    // the authorization's own card clears it; a line with no card matches by reference and urn alone
    t.equal((await s.applyPosting(posting(urn, 'purchase', ref, 2000, { last4: '4321' }), 'S1', null)).outcome, 'cleared_partial')
    t.same(await balances(store, urn), { available: 6500, held: 0, ledger: 6500 })
    t.equal((await s.applyPosting(posting(urn, 'purchase', ref, 500, { last4: '' }), 'S1', null)).outcome, 'cleared')
    t.same(await balances(store, urn), { available: 6000, held: 0, ledger: 6000 })
  })

  t.test('a decision\'s settlement as the console reads it: cleared amount and when its hold expired', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const now = Date.now()
    const cleared = await approve(store, urn, 2500, now + 3_600_000)
    const expiring = await approve(store, urn, 400, now + 1000)
    t.same(await s.decisionSettlement(urn, cleared), { cleared: 0, expiredAtMs: null }, 'nothing yet')
    await s.applyPosting(posting(urn, 'purchase', cleared, 2000), 'S1', null)
    await s.applyPosting(posting(urn, 'purchase', cleared, 300), 'S1', null)
    t.same(await s.decisionSettlement(urn, cleared), { cleared: 2300, expiredAtMs: null }, 'the clearings\' total')
    t.equal(await expireDue(s, now + 2000), 1)
    t.same(await s.decisionSettlement(urn, expiring), { cleared: 0, expiredAtMs: now + 2000 }, 'expired as of the run')
    t.same(await s.decisionSettlement(urn, 'NO-SUCH'), { cleared: 0, expiredAtMs: null })
  })

  t.test('refund credits; reversal releases what is held, else credits; fee debits; adjustment credits; each once', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const ref = await approve(store, urn, 2500, later())
    const rev = posting(urn, 'reversal', ref, 1000)
    t.equal((await s.applyPosting(rev, 'S1', null)).outcome, 'reversal')
    t.same(await balances(store, urn), { available: 8500, held: 1500, ledger: 10_000 })
    const refund = posting(urn, 'refund', 'R-OLD', 700)
    t.equal((await s.applyPosting(refund, 'S1', null)).outcome, 'refund')
    t.equal((await s.applyPosting(posting(urn, 'fee', 'FEE-1', 50), 'S1', null)).outcome, 'fee')
    t.equal((await s.applyPosting(posting(urn, 'adjustment', 'ADJ-1', 5), 'S1', null)).outcome, 'adjustment')
    t.same(await balances(store, urn), { available: 9155, held: 1500, ledger: 10_655 })
    const again = await s.applyPosting(refund, 'S2', null)
    t.equal(again.status, 'replayed')
    t.equal(again.statementId, 'S1')
    t.equal((await s.applyPosting({ ...refund, amount: 701 }, 'S2', null)).status, 'conflict')
    t.same(await balances(store, urn), { available: 9155, held: 1500, ledger: 10_655 }, 'nothing applied twice')
  })

  t.test('a platformId repeated with other content is not applied and is queued as platform_id_conflict, once per statement', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 10_000)
    const refund = posting(urn, 'refund', 'R-C', 700)
    await s.applyPosting(refund, 'S1', null)
    const r = await s.applyPosting({ ...refund, amount: 701 }, 'S2', null)
    t.equal(r.status, 'conflict')
    t.equal(r.exceptions.length, 1)
    const again = await s.applyPosting({ ...refund, amount: 701 }, 'S2', null)
    t.same(again.exceptions, r.exceptions, 'the same statement again: the same exception')
    const x = await s.getException(r.exceptions[0] as string)
    t.match(x, { kind: 'platform_id_conflict', status: 'open', urn, platformId: refund.platformId, statementId: 'S2', amount: '701', accept: { action: 'none', amount: '0' }, detail: /statement S1/ })
    const open = await s.listExceptions({ status: 'open', kind: 'platform_id_conflict', limit: 10 })
    t.equal(open.items.length, 1, 'one in the queue')
    t.same(await balances(store, urn), { available: 10_700, held: 0, ledger: 10_700 }, 'only the first applied')
  })

  t.test('lifecycle lines: matched changes nothing; a mismatch is an exception whose accept moves the difference', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 1000)
    t.equal((await s.applyPosting(posting(urn, 'load', 'L1', 500), 'S1', { matched: true, acceptDelta: 0, detail: '' })).outcome, 'lifecycle_matched')
    const r = await s.applyPosting(posting(urn, 'load', 'L2', 400), 'S1', { matched: false, acceptDelta: 400, detail: 'no load record' })
    t.equal(r.outcome, 'lifecycle_mismatch')
    t.same(await balances(store, urn), { available: 1000, held: 0, ledger: 1000 })
    const id = r.exceptions[0] as string
    const done = await resolveException(store, s, id, { action: 'accept', reason: 'platform loaded it' }, 'k1')
    t.equal(done.exception.status, 'resolved')
    t.same(await balances(store, urn), { available: 1400, held: 0, ledger: 1400 })
    const again = await resolveException(store, s, id, { action: 'accept', reason: 'again' }, 'k1')
    t.equal(again.replayed, true)
    t.same(await balances(store, urn), { available: 1400, held: 0, ledger: 1400 }, 'accepted once')
    await t.rejects(resolveException(store, s, id, { action: 'writeOff', reason: 'other' }, 'k1'), { code: 'EXTAUTH_ERR_ALREADY_RESOLVED' })
  })

  t.test('unmatched: a line for no customer here is an exception and moves nothing', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = urnFor('none')
    const r = await s.applyPosting(posting(urn, 'purchase', 'X', 100), 'S1', null)
    t.equal(r.outcome, 'unmatched')
    t.equal((await s.getException(r.exceptions[0] as string))?.kind, 'unmatched')
    t.equal(await store.getCustomer(urn), null)
  })

  t.test('exceptions are listed newest first, filtered and paged; credit and debit resolve with money', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 1000)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push(...(await s.applyPosting(posting(urn, 'purchase', `FP${i}`, 10), 'S1', null)).exceptions)
    const p1 = await s.listExceptions({ urn, status: 'open', limit: 3 })
    t.equal(p1.items.length, 3)
    t.not(p1.nextCursor, null)
    const p2 = await s.listExceptions({ urn, status: 'open', limit: 3, cursor: p1.nextCursor as string })
    t.equal(p2.items.length, 2)
    t.equal(p2.nextCursor, null)
    t.same(new Set([...p1.items, ...p2.items].map((x) => x.id)), new Set(ids))
    await resolveException(store, s, ids[0] as string, { action: 'credit', amount: 10, reason: 'goodwill' }, 'k1')
    await resolveException(store, s, ids[1] as string, { action: 'writeOff', reason: 'small' }, 'k1')
    t.equal((await s.listExceptions({ urn, status: 'open', limit: 50 })).items.length, 3)
    t.equal((await s.listExceptions({ urn, status: 'resolved', limit: 50 })).items.length, 2)
    t.same(await balances(store, urn), { available: 960, held: 0, ledger: 960 })
  })

  t.test('an exception opened outside a statement: once per key, with its event, in the queue like any', async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const urn = await funded(store, 0)
    const x = { kind: 'negative_balance' as const, key: `sn~${urn}:R1`, urn, reference: 'R1', last4: '4321', postingType: '', outcome: 'standin_replay', amount: 70, accept: { action: 'none' as const, amount: 0 }, detail: 'below zero' }
    const first = await s.openException(x)
    t.match(first, { opened: true, id: /^b\d+~sn~/ })
    t.same(await s.openException({ ...x, amount: 90 }), { id: first.id, opened: false }, 'the same key again opens nothing')
    t.match(await s.getException(first.id), { kind: 'negative_balance', status: 'open', urn, reference: 'R1', amount: '70', platformId: '', statementId: '' })
    const listed = await s.listExceptions({ urn, status: 'open', limit: 10 })
    t.same(listed.items.map((i) => i.id), [first.id])
    const events = (await store.readDecisionStream(urn)).filter((e) => e.type === 'reconciliation.exception')
    t.equal(events.length, 1, 'one reconciliation.exception event')
    t.equal((await resolveException(store, s, first.id, { action: 'accept', reason: 'collected' }, 'k1')).exception.status, 'resolved')
  })
}
