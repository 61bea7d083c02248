// The audit contract: an admin change given the route's audit context writes its record (with the state
// before and after) and its audit.recorded event in the same step; a change refused, replayed or made
// without a context writes none; records read back newest first, filtered and paged. Run on both stores
// (memory.test.ts, redis.test.ts).
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import type { AuditContext, AuditRecord } from '../../src/domain/audit.js'
import type { Store } from '../../src/store/types.js'
import { auditTrailFor } from '../../src/access/audit-trail.js'
import { authInput, rejectionCode, urnFor, type MakeStore } from './contract.js'

export function ctx (keyId: string, route: string, target: Record<string, string>): AuditContext {
  return { id: randomUUID(), keyId, route, scope: 'test', requestId: randomUUID(), target }
}

async function all (store: Store, q: { keyId?: string, fromMs?: number, toMs?: number } = {}): Promise<AuditRecord[]> {
  const trail = auditTrailFor(store)
  if (trail === null) throw new Error('no audit trail for this store')
  const out: AuditRecord[] = []
  let cursor: string | undefined
  do {
    const page = await trail.search({ ...q, limit: 100, ...(cursor !== undefined ? { cursor } : {}) })
    out.push(...page.items)
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  return out
}

export function auditContract (t: Test, make: MakeStore): void {
  t.test('audit: each admin change writes one record with the state before and after, and its event', async (t) => {
    const store = await make(t)
    const urn = urnFor('au')
    const steps: Array<[string, () => Promise<unknown>, AuditContext, unknown, unknown]> = []
    const step = (label: string, target: Record<string, string>, run: (c: AuditContext) => Promise<unknown>, before: unknown, after: unknown): void => {
      const c = ctx('k-1', `X ${label}`, { urn, ...target })
      steps.push([label, async () => await run(c), c, before, after])
    }
    step('create customer', {}, async (c) => await store.putCustomer(urn, { customerId: 'C9' }, c), null, { status: 'ACTIVE', customerId: 'C9', available: '0' })
    step('block customer', {}, async (c) => await store.putCustomer(urn, { status: 'BLOCKED' }, c), { status: 'ACTIVE', customerId: 'C9', available: '0' }, { status: 'BLOCKED', customerId: 'C9', available: '0' })
    step('unblock customer', {}, async (c) => await store.putCustomer(urn, { status: 'ACTIVE' }, c), { status: 'BLOCKED', customerId: 'C9', available: '0' }, { status: 'ACTIVE', customerId: 'C9', available: '0' })
    step('register card', { last4: '4321' }, async (c) => await store.putCard(urn, '4321', 'ACTIVE', c), null, { status: 'ACTIVE' })
    step('credit', { reference: 'cr1', amount: '1000' }, async (c) => await store.credit(urn, 1000, 'cr1', undefined, c), { available: '0' }, { available: '1000' })
    step('debit', { reference: 'db1', amount: '300' }, async (c) => await store.debit(urn, 300, 'db1', undefined, c), { available: '1000' }, { available: '700' })
    step('controls', { last4: '4321' }, async (c) => await store.patchCardControls(urn, '4321', { ECOM: { enabled: false, dailyMax: 5000 } }, c), {}, { ECOM: { enabled: false, dailyMax: 5000 } })
    const approved = authInput(urn)
    steps.push(['approve (not audited: no context)', async () => await store.authorize(approved), ctx('-', '-', {}), undefined, undefined])
    step('reverse', { reference: approved.reference, amount: '40' }, async (c) => await store.reverse(urn, approved.reference, 40, c), { held: '100', available: '600' }, { held: '60', released: '40', available: '640' })
    step('lose card', { last4: '4321' }, async (c) => await store.putCard(urn, '4321', 'LOST', c), { status: 'ACTIVE' }, { status: 'LOST' })

    for (const [label, run, c, before, after] of steps) {
      const had = (await all(store)).length
      await run()
      const now = await all(store)
      if (before === undefined) {
        t.equal(now.length, had, `${label}: no record`)
        continue
      }
      t.equal(now.length, had + 1, `${label}: one record`)
      const rec = now.find((r) => r.id === c.id)
      t.same(rec && { ...rec, atMs: 0 }, { ...c, atMs: 0, outcome: 'done', before, after }, `${label}: the context, outcome done, before and after`)
      t.ok(typeof rec?.atMs === 'number' && Math.abs(rec.atMs - Date.now()) < 60_000, `${label}: the store's clock`)
    }
    const events = (await store.readDecisionStream(urn)).filter((e) => e.type === 'audit.recorded')
    t.same(events.map((e) => e.id !== undefined && e.keyId), Array(steps.length - 1).fill('k-1'), 'an audit.recorded event for each record, in the customer\'s outbox')
    t.match(events[4], { urn, route: 'X credit', outcome: 'done', requestId: steps[4]?.[2].requestId }, 'the event carries the record')
  })

  t.test('audit: a change refused, replayed or made without a context writes no record', async (t) => {
    const store = await make(t)
    const urn = urnFor('an')
    await store.putCustomer(urn, {})
    await store.credit(urn, 100, 'seed', undefined, ctx('k', 'X', { urn }))
    const base = (await all(store)).length
    t.equal(await rejectionCode(store.debit(urn, 500, 'big', undefined, ctx('k', 'X', { urn }))), 'INSUFFICIENT_FUNDS')
    t.equal(await rejectionCode(store.credit(urn, 999, 'seed', undefined, ctx('k', 'X', { urn }))), 'REFERENCE_CONFLICT')
    t.equal(await rejectionCode(store.putCard(urnFor('nobody'), '1111', 'ACTIVE', ctx('k', 'X', {}))), 'CUSTOMER_NOT_FOUND')
    t.equal(await rejectionCode(store.reverse(urn, 'no-such', null, ctx('k', 'X', { urn }))), 'DECISION_NOT_FOUND')
    t.match(await store.credit(urn, 100, 'seed', undefined, ctx('k', 'X', { urn })), { replayed: true })
    await store.credit(urn, 5, 'lifecycle-move', { type: 'load.completed', details: { merchantReferenceNo: 'M1' } })
    t.equal((await all(store)).length, base, 'no record for any of them')
  })

  t.test('audit: a record on its own (reload, lifecycle, re-send, refusal) and reading by time, key and page', async (t) => {
    const store = await make(t)
    const urn = urnFor('ar')
    const t0 = Date.now() - 1
    const written: AuditRecord[] = []
    for (let i = 0; i < 7; i++) {
      written.push(await store.appendAudit({ ...ctx(i % 2 === 0 ? 'even' : 'odd', 'POST /admin/v1/rules/reload', i < 3 ? { urn } : {}), outcome: i === 6 ? 'refused' : 'done', before: { version: `v${i}` }, after: null }))
    }
    t.ok(written.every((r) => typeof r.atMs === 'number' && r.atMs >= t0 - 5000), 'each given back with the store\'s time')
    const got = await all(store)
    t.same(got.map((r) => r.id).sort(), written.map((r) => r.id).sort(), 'all read back')
    t.ok(got.every((r, i) => i === 0 || (got[i - 1] as AuditRecord).atMs >= r.atMs), 'newest first')
    t.same(got.find((r) => r.id === written[6]?.id), written[6], 'as written')
    t.same((await all(store, { keyId: 'odd' })).map((r) => r.id).sort(), written.filter((_, i) => i % 2 === 1).map((r) => r.id).sort(), 'by key id')
    t.same(await all(store, { fromMs: Date.now() + 60_000 }), [], 'from after the last: none')
    t.same(await all(store, { toMs: t0 - 60_000 }), [], 'to before the first: none')
    const trail = auditTrailFor(store)
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await trail?.search({ limit: 2, ...(cursor !== undefined ? { cursor } : {}) })
      seen.push(...(page?.items ?? []).map((r) => r.id))
      cursor = page?.nextCursor ?? undefined
      pages++
    } while (cursor !== undefined && pages < 10)
    t.same(seen, got.map((r) => r.id), 'pages of 2 give every record once, in order')
    // a record without a customer goes to the bucket of its own id, which may be this customer's bucket
    const events = (await store.readDecisionStream(urn)).filter((e) => e.type === 'audit.recorded' && e.urn === urn)
    t.equal(events.length, 3, 'the records with a customer are in its outbox as events')
  })
}
