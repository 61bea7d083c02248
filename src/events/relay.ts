// The relay: runs in every instance and sends the outbox's events to WEBHOOK_URL (docs/api/events.md).
//
// Work is shared by bucket: an instance takes a bucket with a short lease, so one sender at a time reads a
// bucket's stream and the order per customer (one customer, one bucket) holds. Inside a bucket each
// customer's events go one after the other while customers go side by side; a failing event holds back the
// later events of its customer only. A lease not renewed (the instance died) expires, another instance takes
// the bucket and claims what the dead one had read but not acknowledged (XAUTOCLAIM), and sends it first.
// Entries are acknowledged and trimmed once delivered or parked, never before.
//
// What the relay learns of new events: the hint of this instance's own store (at once) and a sweep of every
// bucket's length (SWEEP_MS) for events written by other instances. It only ever awaits I/O; decisions
// never wait for it.
//
// It gives way to the decisions on a busy instance: at most `sendsMax` sends in flight, and while the event
// loop is busy (its utilization above `busyElu`) a quarter of that, and a pass waits, up to `yieldMaxMs`,
// so the passes come fewer and larger. It never stops: past `yieldMaxMs` a pass runs whatever the load, so
// a retry is late by at most that, and a bucket's lease (renewed by its passes) is kept.
import { relayFailure } from './relay-errors.js'
import { randomUUID } from 'node:crypto'
import { performance, type EventLoopUtilization } from 'node:perf_hooks'
import type { Logger } from 'pino'
import type { Outbox, OutboxItem } from './outbox.js'
import type { Sender } from './webhook.js'
import type { EventMetrics } from './metrics.js'
import { eventBody, type WebhookEvent } from '../store/outbox-entry.js'

export interface RelayOptions {
  outbox: Outbox
  send: Sender
  metrics: EventMetrics
  log: Logger
  /** WEBHOOK_EVENTS: the types to send; absent: all */
  types?: ReadonlySet<string>
  consumer?: string
  leaseMs?: number
  sweepMs?: number
  batch?: number
  /** buckets worked on at once */
  concurrency?: number
  /** how long a hint waits for others before a pass (ms) */
  gatherMs?: number
  /** EVENTS_SENDS_MAX: sends in flight at most, over all buckets */
  sendsMax?: number
  /** event-loop utilization (0..1) above which passes wait; 1 or more: never */
  busyElu?: number
  /** the longest a pass waits for a busy event loop */
  yieldMaxMs?: number
  /** first retry after at most this (jittered down to half) */
  firstRetryMs?: number
  maxRetryMs?: number
  /** failing events are retried this long after they were written, then parked */
  retryForMs?: number
  clock?: () => number
}

interface Pending extends OutboxItem {
  event: WebhookEvent | null
  urn: string
  attempts: number
  nextAtMs: number
  lastError: string
}

interface Held {
  queue: Pending[]
  renewedAtMs: number
  lastActiveMs: number
  timer: NodeJS.Timeout | null
}

export const RETRY_FOR_MS_DEFAULT = 24 * 3600_000

export class Relay {
  readonly consumer: string
  private readonly o: Required<Omit<RelayOptions, 'types'>> & { types?: ReadonlySet<string> }
  private readonly held = new Map<number, Held>()
  private readonly due = new Set<number>()
  private readonly running = new Set<number>()
  private sweepTimer: NodeJS.Timeout | null = null
  private hintTimer: NodeJS.Timeout | null = null
  private stopped = true
  private sweeping = false
  private sending = 0
  private readonly sendWaiters: Array<() => void> = []
  /** the event loop's utilization over the last sample, and the sampler */
  private elu = 0
  private eluMark: EventLoopUtilization | null = null
  private eluTimer: NodeJS.Timeout | null = null
  /** since when passes have been held back for a busy event loop (0: not held) */
  private yieldingSinceMs = 0
  private yieldTimer: NodeJS.Timeout | null = null
  /** passes held back for a busy event loop (for the bench and tests) */
  yields = 0

  constructor (opts: RelayOptions) {
    this.o = {
      consumer: `${process.pid}-${randomUUID().slice(0, 8)}`,
      leaseMs: 10_000,
      sweepMs: 1000,
      batch: 100,
      concurrency: 16,
      gatherMs: 5,
      sendsMax: 32,
      busyElu: 0.9,
      yieldMaxMs: 1000,
      firstRetryMs: 2000,
      maxRetryMs: 3600_000,
      retryForMs: RETRY_FOR_MS_DEFAULT,
      clock: Date.now,
      ...opts
    }
    this.consumer = this.o.consumer
  }

  start (): void {
    if (!this.stopped) return
    this.stopped = false
    if (this.o.busyElu < 1) {
      this.eluMark = performance.eventLoopUtilization()
      this.eluTimer = setInterval(() => {
        const now = performance.eventLoopUtilization()
        this.elu = performance.eventLoopUtilization(now, this.eluMark ?? undefined).utilization
        this.eluMark = now
      }, 100)
      this.eluTimer.unref()
    }
    const tick = (): void => {
      if (this.stopped) return
      this.sweep().catch((err: unknown) => { this.o.log.warn(relayFailure(err), 'events: sweep failed') })
        .finally(() => { if (!this.stopped) this.sweepTimer = setTimeout(tick, this.o.sweepMs) })
    }
    tick()
  }

  /** whether this instance is sending (EVENTS_RELAY) */
  get started (): boolean {
    return !this.stopped
  }

  /** The store wrote an event in this bucket. */
  hint (bucket: number): void {
    this.o.metrics.written.inc()
    if (this.stopped) return
    this.due.add(bucket)
    // a short wait gathers the events of a busy moment into fewer, larger passes
    if (this.hintTimer === null) {
      this.hintTimer = setTimeout(() => { this.hintTimer = null; this.pump() }, this.o.gatherMs)
      this.hintTimer.unref()
    }
  }

  /** Stops reading; what is in hand stays pending and goes to another instance (or this one, restarted). */
  async stop (): Promise<void> {
    this.stopped = true
    if (this.sweepTimer !== null) clearTimeout(this.sweepTimer)
    if (this.hintTimer !== null) clearTimeout(this.hintTimer)
    if (this.eluTimer !== null) clearInterval(this.eluTimer)
    if (this.yieldTimer !== null) clearTimeout(this.yieldTimer)
    this.yieldTimer = null
    for (const [bucket, h] of this.held) {
      if (h.timer !== null) clearTimeout(h.timer)
      await this.o.outbox.unlease(bucket, this.consumer).catch(() => {})
    }
    this.held.clear()
  }

  async parkedEvents (): Promise<Awaited<ReturnType<Outbox['parked']>>> {
    return await this.o.outbox.parked()
  }

  /** Sends one parked event again, now; removes it from the parked list when the receiver takes it. */
  async resend (id: string): Promise<{ found: boolean, ok: boolean, detail: string }> {
    const p = await this.o.outbox.getParked(id)
    if (p === null) return { found: false, ok: false, detail: 'not parked' }
    const r = await this.o.send(p.event)
    if (r.ok) {
      await this.o.outbox.unpark(id)
      this.o.metrics.delivered.inc({ type: p.event.type })
    } else {
      await this.o.outbox.park({ ...p, attempts: p.attempts + 1, lastError: r.detail })
    }
    return { found: true, ok: r.ok, detail: r.detail }
  }

  private async sweep (): Promise<void> {
    if (this.sweeping) return
    this.sweeping = true
    try {
      const active = await this.o.outbox.activeBuckets()
      const now = this.o.clock()
      const isActive = new Set(active)
      // buckets quiet for a lease period go back (kept meanwhile: taking a bucket costs a claim)
      for (const [b, h] of this.held) {
        if (!isActive.has(b) && h.queue.length === 0 && !this.running.has(b) && now - h.lastActiveMs > this.o.leaseMs) await this.release(b)
      }
      for (const b of active) this.due.add(b)
      const [oldest, dropped] = await Promise.all([this.o.outbox.oldest(active), this.o.outbox.takeDropped(active)])
      let min = Infinity
      for (const id of oldest) if (id !== null) min = Math.min(min, Number(id.slice(0, id.indexOf('-'))))
      this.o.metrics.oldestSeconds.set(min === Infinity ? 0 : Math.max(0, (now - min) / 1000))
      if (dropped > 0) {
        this.o.metrics.dropped.inc(dropped)
        this.o.log.error({ dropped }, 'events: undelivered events dropped past EVENTS_BACKLOG_MAX')
      }
      this.pump()
    } finally {
      this.sweeping = false
    }
  }

  private async release (bucket: number): Promise<void> {
    const h = this.held.get(bucket)
    if (h?.timer != null) clearTimeout(h.timer)
    this.held.delete(bucket)
    await this.o.outbox.unlease(bucket, this.consumer).catch(() => {})
  }

  /** true when passes should wait for the decisions now (and a later pump is scheduled) */
  private yielding (): boolean {
    if (this.elu < this.o.busyElu) { this.yieldingSinceMs = 0; return false }
    const now = this.o.clock()
    if (this.yieldingSinceMs === 0) this.yieldingSinceMs = now
    // held back long enough: this pass runs, whatever the load
    if (now - this.yieldingSinceMs >= this.o.yieldMaxMs) { this.yieldingSinceMs = now; return false }
    this.yields++
    if (this.yieldTimer === null) {
      this.yieldTimer = setTimeout(() => { this.yieldTimer = null; if (!this.stopped) this.pump() }, Math.min(100, this.o.yieldMaxMs))
      this.yieldTimer.unref()
    }
    return true
  }

  private pump (): void {
    if (this.due.size === 0 || this.yielding()) return
    for (const b of this.due) {
      if (this.running.size >= this.o.concurrency) return
      if (this.running.has(b)) continue
      this.due.delete(b)
      this.running.add(b)
      this.work(b)
        .catch((err) => {
          this.o.log.warn({ ...relayFailure(err), bucket: b }, 'events: bucket pass failed; retried on the next sweep')
          const h = this.held.get(b)
          if (h !== undefined) this.later(b, h, this.o.firstRetryMs)
        })
        .finally(() => {
          this.running.delete(b)
          if (!this.stopped) this.pump()
        })
    }
  }

  private later (bucket: number, h: Held, ms: number): void {
    if (h.timer !== null) clearTimeout(h.timer)
    h.timer = setTimeout(() => {
      h.timer = null
      if (this.stopped) return
      this.due.add(bucket)
      this.pump()
    }, Math.max(0, Math.min(ms, this.o.leaseMs / 3)))
    h.timer.unref()
  }

  private pending (item: OutboxItem): Pending {
    const event = item.fields === null ? null : eventBody(item.bucket, item.streamId, item.fields)
    return { ...item, event, urn: item.fields?.u ?? '', attempts: 0, nextAtMs: 0, lastError: '' }
  }

  /** One pass over a bucket: take or keep its lease, read, send what is due, settle. */
  private async work (bucket: number): Promise<void> {
    const o = this.o
    const now = o.clock()
    let h = this.held.get(bucket)
    if (h === undefined || now - h.renewedAtMs > o.leaseMs / 3) {
      if (!await o.outbox.lease(bucket, this.consumer, o.leaseMs)) {
        if (h !== undefined) {
          // lost the lease (a long pause): another instance has the bucket and its pending entries now
          if (h.timer !== null) clearTimeout(h.timer)
          this.held.delete(bucket)
        }
        return
      }
      if (h === undefined) {
        h = { queue: [], renewedAtMs: now, lastActiveMs: now, timer: null }
        this.held.set(bucket, h)
        h.queue.push(...(await o.outbox.claim(bucket, this.consumer, o.batch)).map((i) => this.pending(i)))
      }
      h.renewedAtMs = now
    }
    const fresh = h.queue.length < o.batch ? await o.outbox.read(bucket, this.consumer, o.batch) : []
    h.queue.push(...fresh.map((i) => this.pending(i)))
    if (h.queue.length > 0) h.lastActiveMs = now

    // each customer's events in order, customers side by side
    const chains = new Map<string, Pending[]>()
    for (const p of h.queue) {
      const c = chains.get(p.urn)
      if (c === undefined) chains.set(p.urn, [p]); else c.push(p)
    }
    const done = new Set<Pending>()
    await Promise.all([...chains.values()].map(async (chain) => {
      for (const p of chain) {
        if (!await this.attempt(p)) return
        done.add(p)
      }
    }))

    const ids = [...done].map((p) => p.streamId)
    const left = h.queue.filter((p) => !done.has(p))
    const last = h.queue[h.queue.length - 1]
    if (ids.length > 0) await o.outbox.settle(bucket, ids, left[0]?.streamId ?? null, last?.streamId ?? null)
    h.queue = left

    if (fresh.length >= o.batch) this.due.add(bucket)
    else if (left.length > 0) this.later(bucket, h, Math.min(...left.map((p) => p.nextAtMs)) - o.clock())
  }

  private async sendBounded (event: WebhookEvent): Promise<Awaited<ReturnType<Sender>>> {
    // a quarter of the bound while the event loop is busy
    const max = (): number => this.elu >= this.o.busyElu ? Math.max(1, Math.floor(this.o.sendsMax / 4)) : this.o.sendsMax
    while (this.sending >= max()) await new Promise<void>((resolve) => this.sendWaiters.push(resolve))
    this.sending++
    try {
      return await this.o.send(event)
    } finally {
      this.sending--
      // each waiter checks the bound again (it may have grown since the loop calmed down)
      for (const wake of this.sendWaiters.splice(0)) wake()
    }
  }

  /** true when the event is settled (delivered, parked, filtered or dropped) */
  private async attempt (p: Pending): Promise<boolean> {
    const o = this.o
    if (p.event === null) return true
    if (o.types !== undefined && !o.types.has(p.event.type)) {
      o.metrics.filtered.inc()
      return true
    }
    const now = o.clock()
    if (p.nextAtMs > now) return false
    const r = await this.sendBounded(p.event)
    const writtenMs = Date.parse(p.event.createdAt)
    if (r.ok) {
      o.metrics.delivered.inc({ type: p.event.type })
      o.metrics.deliverySeconds.observe(Math.max(0, o.clock() - writtenMs) / 1000)
      return true
    }
    p.attempts++
    p.lastError = r.detail
    if (o.clock() - writtenMs >= o.retryForMs) {
      await o.outbox.park({ event: p.event, parkedAtMs: o.clock(), attempts: p.attempts, lastError: r.detail })
      o.metrics.parked.inc()
      o.log.error({ eventId: p.event.id, type: p.event.type, attempts: p.attempts, lastError: r.detail }, 'events: parked after the retry period')
      return true
    }
    o.metrics.retried.inc()
    // exponential, with full jitter over the upper half: spread, yet the first retry within firstRetryMs
    const ceiling = Math.min(o.maxRetryMs, o.firstRetryMs * 2 ** (p.attempts - 1))
    p.nextAtMs = o.clock() + ceiling / 2 + Math.random() * ceiling / 2
    if (p.attempts === 1 || p.attempts % 10 === 0) o.log.warn({ eventId: p.event.id, type: p.event.type, attempts: p.attempts, lastError: r.detail }, 'events: delivery failed; retrying')
    return false
  }
}
