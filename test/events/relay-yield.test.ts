// The relay gives way to the decisions: at most sendsMax sends in flight; on a busy event loop its passes
// wait, yet never longer than yieldMaxMs, so every event still arrives, in order per customer; and an
// instance with EVENTS_RELAY=false writes events without sending them.
import t from 'tap'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { randomBytes, randomUUID } from 'node:crypto'
import { MemoryStore } from '../../src/store/memory.js'
import { MemoryOutbox } from '../../src/events/outbox.js'
import { Relay, type RelayOptions } from '../../src/events/relay.js'
import { createEventMetrics } from '../../src/events/metrics.js'
import type { Sender } from '../../src/events/webhook.js'
import type { WebhookEvent } from '../../src/store/outbox-entry.js'
import { startEvents } from '../../src/events/start.js'
import { createMetrics } from '../../src/metrics.js'
import { testConfig } from '../helpers/config.js'

interface Gate { send: Sender, sent: WebhookEvent[], inFlight: () => number, maxInFlight: () => number, open: () => void, until: (pred: () => boolean) => Promise<void> }

/** A receiver in the test's hands: each send waits until `open` releases the ones waiting. */
function gate (): Gate {
  const waiting: Array<() => void> = []
  const sent: WebhookEvent[] = []
  const waiters: Array<{ pred: () => boolean, resolve: () => void }> = []
  let inFlight = 0
  let max = 0
  const poke = (): void => {
    for (const w of waiters.splice(0)) if (w.pred()) w.resolve(); else waiters.push(w)
  }
  return {
    sent,
    inFlight: () => inFlight,
    maxInFlight: () => max,
    send: async (event) => {
      inFlight++
      max = Math.max(max, inFlight)
      poke()
      await new Promise<void>((resolve) => waiting.push(resolve))
      inFlight--
      sent.push(event)
      poke()
      return { ok: true, detail: 'HTTP 204' }
    },
    open: () => { for (const r of waiting.splice(0)) r() },
    until: async (pred) => {
      if (pred()) return
      await new Promise<void>((resolve) => waiters.push({ pred, resolve }))
    }
  }
}

async function rig (t: { teardown: (fn: () => unknown) => void }, g: Gate, opts: Partial<RelayOptions>): Promise<{ store: MemoryStore, relay: Relay }> {
  const store = new MemoryStore()
  const relay = new Relay({ outbox: new MemoryOutbox(store), send: g.send, metrics: createEventMetrics(new Registry()), log: pino({ level: 'silent' }), sweepMs: 50, ...opts })
  store.onEvent = (b) => { relay.hint(b) }
  relay.start()
  t.teardown(async () => { g.open(); await relay.stop() })
  return { store, relay }
}

/** each customer's events as the receiver got them, in arrival order */
function perCustomer (sent: WebhookEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const e of sent) {
    const urn = String(e.data.urn)
    out.set(urn, [...out.get(urn) ?? [], `${e.type}:${String(e.data.reference ?? '')}`])
  }
  return out
}

async function writeEvents (store: MemoryStore, urns: string[]): Promise<Map<string, string[]>> {
  const want = new Map<string, string[]>()
  for (const urn of urns) {
    await store.putCustomer(urn, {})
    await store.credit(urn, 500, 'c1')
    await store.debit(urn, 200, 'd1')
    want.set(urn, ['customer.updated:', 'funds.credited:c1', 'funds.debited:d1'])
  }
  return want
}

t.test('at most sendsMax sends in flight, over every bucket', async (t) => {
  const g = gate()
  const { store } = await rig(t, g, { sendsMax: 3, concurrency: 16 })
  const urns = Array.from({ length: 24 }, () => `Y${randomUUID().slice(0, 10)}`)
  const want = await writeEvents(store, urns)
  while (g.sent.length < urns.length * 3) {
    // whatever is sendable now is in flight before the gate opens
    await g.until(() => g.inFlight() > 0)
    await new Promise((resolve) => setImmediate(resolve))
    g.open()
    await g.until(() => g.inFlight() === 0)
  }
  t.equal(g.maxInFlight(), 3, 'the bound was reached and never passed')
  t.same(perCustomer(g.sent), want, 'every event, in order per customer')
})

t.test('a busy event loop holds passes back, never longer than yieldMaxMs', async (t) => {
  const g = gate()
  // busyElu 0: the loop counts as busy all the time, so every pass is one held back to its limit
  const { store, relay } = await rig(t, g, { busyElu: 0, yieldMaxMs: 200 })
  const urns = Array.from({ length: 8 }, () => `Y${randomUUID().slice(0, 10)}`)
  // the utilization is sampled every 100 ms: once sampled, the relay sees a busy loop
  await new Promise((resolve) => setTimeout(resolve, 150))
  const want = await writeEvents(store, urns)
  const opener = setInterval(() => { g.open() }, 5)
  t.teardown(() => { clearInterval(opener) })
  await g.until(() => g.sent.length >= urns.length * 3)
  t.ok(relay.yields > 0, `passes held back (${relay.yields})`)
  t.same(perCustomer(g.sent), want, 'every event still arrives, in order per customer')
})

t.test('EVENTS_RELAY=false: the instance writes events and sends none', async (t) => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  for (const [relayOn, started] of [['true', true], ['false', false]] as const) {
    const config = testConfig({ WEBHOOK_URL: 'http://127.0.0.1:9/h', WEBHOOK_SECRET: secret, EVENTS_RELAY: relayOn })
    const store = new MemoryStore()
    const events = startEvents(config, store, createMetrics(), pino({ level: 'silent' }))
    t.teardown(async () => { await events?.stop() })
    t.equal(events?.relay.started, started, `EVENTS_RELAY=${relayOn}`)
    await store.putCustomer(`Y${randomUUID().slice(0, 10)}`, {})
    t.same(await events?.relay.parkedEvents(), [], 'the parked list is served either way')
  }
})
