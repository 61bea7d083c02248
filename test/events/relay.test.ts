// The events relay against a real receiver on loopback, over the memory store and the shared Redis:
// signatures, the §9 types and fields, retries with the same id, order per customer, parking, sharing.
import t, { type Test } from 'tap'
import { randomBytes, randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { Webhook } from 'standardwebhooks'
import { MemoryStore } from '../../src/store/memory.js'
import type { RedisStore } from '../../src/store/redis.js'
import { MemoryOutbox, RedisOutbox, type Outbox } from '../../src/events/outbox.js'
import { Relay, type RelayOptions } from '../../src/events/relay.js'
import { createWebhookSender } from '../../src/events/webhook.js'
import { createEventMetrics, type EventMetrics } from '../../src/events/metrics.js'
import { receiver, type Receiver } from '../helpers/receiver.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { authInput } from '../store/contract.js'
import { bucketOf } from '../../src/store/keys.js'
import { StoreRejection } from '../../src/errors.js'

const SECRET = `whsec_${randomBytes(24).toString('base64')}`
type Tap = Test

interface Setup { store: MemoryStore | RedisStore, relay: Relay, rx: Receiver, metrics: EventMetrics, outbox: Outbox }

function outboxOf (store: MemoryStore | RedisStore): Outbox {
  return store instanceof MemoryStore ? new MemoryOutbox(store) : new RedisOutbox(store.client, store.keys.prefix)
}

async function startRelay (t: Tap, store: MemoryStore | RedisStore, rx: Receiver, opts: Partial<RelayOptions> = {}): Promise<{ relay: Relay, metrics: EventMetrics, outbox: Outbox }> {
  const outbox = opts.outbox ?? outboxOf(store)
  const sender = createWebhookSender({ url: rx.url, secret: SECRET, timeoutMs: 2000 })
  const metrics = createEventMetrics(new Registry())
  const relay = new Relay({ outbox, send: sender.send, metrics, log: pino({ level: 'silent' }), sweepMs: 100, firstRetryMs: 200, ...opts })
  store.onEvent = (b) => { relay.hint(b) }
  relay.start()
  t.teardown(async () => { await relay.stop(); await sender.close() })
  return { relay, metrics, outbox }
}

async function setup (t: Tap, kind: 'memory' | 'redis', opts: Partial<RelayOptions> = {}): Promise<Setup> {
  const store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
  const rx = await receiver(t)
  return { store, rx, ...await startRelay(t, store, rx, opts) }
}

const urnOf = (): string => `U${randomUUID().slice(0, 12)}`

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: every change's event arrives signed, verifiable with the Standard Webhooks library`, async (t) => {
    const { store, rx } = await setup(t, kind)
    const urn = urnOf()
    await store.putCustomer(urn, { customerId: 'C1' })
    await store.putCard(urn, '4321', 'ACTIVE')
    await store.credit(urn, 1000, 'top-1')
    const input = authInput(urn, { debitAmount: 300, meta: { rulesVersion: 'v9', shadowHits: [], transactionAmount: '3.00', currencyCode: '356', channel: 'POS', request: { urn, transactionReferenceNumber: 'x', last4Digits: '4321' } } as never })
    await store.authorize(input)
    await store.reverse(urn, input.reference, 100)
    await store.patchCardControls(urn, '4321', { ATM: { enabled: false } })
    await store.debit(urn, 50, 'fee-1')
    await store.authorize(authInput(urn, { debitAmount: 5000 }))
    await rx.until(() => rx.accepted().length >= 8)
    const wh = new Webhook(SECRET)
    for (const r of rx.received) {
      const verified = wh.verify(r.body, r.headers) as { id: string }
      t.equal(verified.id, r.headers['webhook-id'], 'the body id is the webhook-id')
    }
    t.throws(() => wh.verify(rx.received[0]?.body.replace('C1', 'C2') ?? '', rx.received[0]?.headers ?? {}), 'a changed body fails verification')
    const events = rx.accepted()
    t.same(events.map((e) => e.type), ['customer.updated', 'card.updated', 'funds.credited', 'decision.created', 'decision.reversed', 'card.controls.updated', 'funds.debited', 'decision.created'])
    t.equal(new Set(events.map((e) => e.id)).size, events.length, 'ids are unique')
    const [cust, card, credit, approved, reversed, controls, debit, declined] = events
    t.match(cust?.data, { urn, created: true, status: 'ACTIVE', customerId: 'C1' })
    t.match(card?.data, { urn, last4: '4321', status: 'ACTIVE', previous: null })
    t.match(credit?.data, { urn, reference: 'top-1', amount: '1000', available: '1000' })
    t.match(approved?.data, { urn, reference: input.reference, code: '00', reason: 'approved', debit: '300', held: '300', rulesVersion: 'v9', request: { last4Digits: '4321' } })
    t.match(approved?.data.arrivedAt, /^\d{4}-\d\d-\d\dT/)
    t.match(reversed?.data, { urn, reference: input.reference, released: '100', held: '200' })
    t.same(controls?.data, { urn, last4: '4321', before: {}, after: { ATM: { enabled: false } } })
    t.match(debit?.data, { reference: 'fee-1', amount: '50' })
    t.match(declined?.data, { code: '51', reason: 'insufficient_funds', held: '0' })
    for (const e of events) t.ok(Number.isFinite(Date.parse(e.createdAt)), 'createdAt is ISO 8601')
  })

  t.test(`${kind}: an outbox write is atomic with its change: a refused operation writes neither`, async (t) => {
    const store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const urn = urnOf()
    await store.putCustomer(urn, {})
    await store.credit(urn, 100, 'c1')
    const before = await store.readDecisionStream(urn)
    await t.rejects(store.debit(urn, 500, 'd1'), StoreRejection)
    await t.rejects(store.credit(urn, 999, 'c1'), StoreRejection, 'same reference, other amount')
    await t.rejects(store.putCard(urnOf(), '1111', 'ACTIVE'), StoreRejection)
    await t.rejects(store.reverse(urn, 'none', null), StoreRejection)
    if (kind === 'redis') {
      // the script itself refuses a malformed amount before writing anything
      const r = store as RedisStore
      const scripts = (r as unknown as { scripts: { extauthMoneyOp: (...a: string[]) => Promise<unknown> } }).scripts
      await t.rejects(scripts.extauthMoneyOp(r.keys.customer(urn), r.keys.moneyOp(urn, 'credit', 'bad'), r.keys.stream(urn),
        'credit', '-5', 'bad', urn, '1000', '9007199254740991', '60', '', ''), /EXTAUTH_ASSERT/)
    }
    t.same(await store.readDecisionStream(urn), before, 'no event without its change')
    t.equal((await store.getCustomer(urn))?.available, 100, 'and no change')
  })

  t.test(`${kind}: a receiver down for a while gets every event afterwards, each with the id it had`, async (t) => {
    // retries a second apart at most: an event whose 200 came back after the sender's timeout (a loaded machine)
    // is sent again, and trimmed, within the test's time, not after a backoff grown through the 503s
    const { store, rx, metrics } = await setup(t, kind, { maxRetryMs: 1000 })
    rx.status = 503
    const urns = [urnOf(), urnOf(), urnOf()]
    for (const urn of urns) await store.putCustomer(urn, {})
    for (let i = 0; i < 5; i++) for (const urn of urns) await store.credit(urn, 10 + i, `c${i}`)
    await rx.until(() => rx.received.length >= 6)
    rx.status = 200
    await rx.until(() => rx.accepted().length >= 18)
    const ids = new Map<string, number>()
    for (const r of rx.received) ids.set(r.headers['webhook-id'] as string, (ids.get(r.headers['webhook-id'] as string) ?? 0) + 1)
    t.equal(rx.accepted().length, 18, 'every event once accepted')
    const failedIds = rx.received.filter((r) => r.status >= 300).map((r) => r.headers['webhook-id'] as string)
    t.ok(failedIds.length > 0)
    for (const id of failedIds) t.ok(rx.accepted().some((e) => e.id === id), `${id} retried with the same id`)
    for (const urn of urns) {
      t.same(rx.accepted().filter((e) => e.data.urn === urn && e.type === 'funds.credited').map((e) => e.data.reference), ['c0', 'c1', 'c2', 'c3', 'c4'], 'in order per customer')
    }
    t.ok(((await metrics.retried.get()).values[0]?.value ?? 0) > 0, 'retries counted')
    // settled just after the receiver's answer: wait for the trim
    while ((await store.readDecisionStream(urns[0] as string)).length > 0) await new Promise((resolve) => setTimeout(resolve, 20))
    t.pass('delivered events are trimmed')
  })

  t.test(`${kind}: a failing event holds back its customer only`, async (t) => {
    const { store, rx } = await setup(t, kind)
    const a = urnOf()
    const b = urnOf()
    await store.putCustomer(a, {})
    await store.putCustomer(b, {})
    await rx.until(() => rx.accepted().length >= 2)
    rx.decide = (e) => (e.data.urn === a && e.data.reference === 'a1' ? 500 : 200)
    await store.credit(a, 1, 'a1')
    await store.credit(a, 2, 'a2')
    await store.credit(b, 3, 'b1')
    await rx.until(() => rx.accepted().some((e) => e.data.reference === 'b1') && rx.received.filter((r) => r.status === 500).length >= 2)
    t.notOk(rx.accepted().some((e) => e.data.reference === 'a2'), 'a2 waits behind a1')
    rx.decide = null
    await rx.until(() => rx.accepted().some((e) => e.data.reference === 'a2'))
    t.same(rx.accepted().filter((e) => e.data.urn === a && e.type === 'funds.credited').map((e) => e.data.reference), ['a1', 'a2'])
  })

  t.test(`${kind}: past the retry period an event is parked, listed, and sent again on request`, async (t) => {
    const { store, rx, relay, metrics } = await setup(t, kind, { retryForMs: 0 })
    rx.status = 500
    const urn = urnOf()
    await store.putCustomer(urn, {})
    await store.credit(urn, 7, 'p1')
    await rx.until(() => rx.received.length >= 2)
    let parked = await relay.parkedEvents()
    while (parked.length < 2) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      parked = await relay.parkedEvents()
    }
    t.same(parked.map((p) => p.event.type).sort(), ['customer.updated', 'funds.credited'])
    t.equal((await metrics.parked.get()).values[0]?.value, 2)
    const credit = parked.find((p) => p.event.type === 'funds.credited')
    t.match(credit, { attempts: 1, lastError: 'HTTP 500' })
    t.same(await relay.resend(credit?.event.id ?? ''), { found: true, ok: false, detail: 'HTTP 500' }, 'still failing: kept')
    rx.status = 200
    t.same(await relay.resend(credit?.event.id ?? ''), { found: true, ok: true, detail: 'HTTP 200' })
    t.equal(rx.accepted()[0]?.id, credit?.event.id, 'sent with its own id')
    t.equal((await relay.parkedEvents()).length, 1)
    t.same(await relay.resend('evt_1_2_3'), { found: false, ok: false, detail: 'not parked' })
  })
}

t.test('redis: two relays share the buckets; one stopping dead leaves its events to the other', async (t) => {
  const store = await sharedRedisStore(t)
  const rx = await receiver(t)
  const one = await startRelay(t, store, rx, { leaseMs: 600 })
  const two = await startRelay(t, store, rx, { leaseMs: 600 })
  // both relays see every hint of the one store: only leases keep them from sending a bucket twice at once
  store.onEvent = (b) => { one.relay.hint(b); two.relay.hint(b) }
  const urns = Array.from({ length: 8 }, urnOf)
  for (const urn of urns) await store.putCustomer(urn, {})
  await rx.until(() => rx.accepted().length >= 8)
  // the first dies holding whatever it has: its leases are not given back
  rx.status = 503
  for (const urn of urns) await store.credit(urn, 5, 'k1')
  await rx.until(() => rx.received.length >= 16)
  ;(one.relay as unknown as { stopped: boolean }).stopped = true
  store.onEvent = (b) => { two.relay.hint(b) }
  for (const urn of urns) await store.credit(urn, 6, 'k2')
  rx.status = 200
  await rx.until(() => urns.every((u) => rx.accepted().filter((e) => e.data.urn === u && e.type === 'funds.credited').length >= 2))
  for (const urn of urns) {
    t.same(rx.accepted().filter((e) => e.data.urn === urn && e.type === 'funds.credited').map((e) => e.data.reference), ['k1', 'k2'], `${urn}: nothing lost, in order`)
  }
  t.ok(bucketOf(urns[0] as string) >= 0)
})
