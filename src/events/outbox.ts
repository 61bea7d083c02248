// What the relay needs of the outbox, over Redis (one stream and consumer group per bucket, so it works the
// same on a Redis Cluster, where one command cannot read streams of several slots) and over the embedded
// memory store.
import { Redis, Cluster, ReplyError } from 'ioredis'
import { BUCKETS, Keys } from '../store/keys.js'
import type { MemoryStore } from '../store/memory.js'
import { pairsToObject } from '../store/control-fields.js'
import type { WebhookEvent } from '../store/outbox-entry.js'
import { luaScript } from '../store/lua-source.js'

export interface OutboxItem {
  bucket: number
  streamId: string
  /** null: the entry was dropped (backlog bound) before it could be sent */
  fields: Record<string, string> | null
}

export interface ParkedEvent {
  event: WebhookEvent
  parkedAtMs: number
  attempts: number
  lastError: string
}

export interface Outbox {
  /** the buckets whose stream holds entries (delivered ones are trimmed away) */
  activeBuckets (): Promise<number[]>
  /** takes or renews the bucket for `owner`; false while another instance holds it */
  lease (bucket: number, owner: string, ttlMs: number): Promise<boolean>
  unlease (bucket: number, owner: string): Promise<void>
  /** entries read before by any consumer and never acknowledged (a dead instance's), now `consumer`'s */
  claim (bucket: number, consumer: string, count: number): Promise<OutboxItem[]>
  /** entries never read before, in order */
  read (bucket: number, consumer: string, count: number): Promise<OutboxItem[]>
  /** acknowledges `ids` and trims the stream below `keepFrom` (null: through `lastId`) */
  settle (bucket: number, ids: string[], keepFrom: string | null, lastId: string | null): Promise<void>
  /** the stream id of each bucket's oldest entry */
  oldest (buckets: number[]): Promise<Array<string | null>>
  /** entries dropped since the last call (each call takes them, so every drop is counted once overall) */
  takeDropped (buckets: number[]): Promise<number>
  park (p: ParkedEvent): Promise<void>
  parked (): Promise<ParkedEvent[]>
  getParked (id: string): Promise<ParkedEvent | null>
  unpark (id: string): Promise<void>
}

export const GROUP = 'relay'

/** the id right after `id`, so that MINID trims `id` too */
export function nextId (id: string): string {
  const [ms, seq] = id.split('-')
  return `${ms as string}-${BigInt(seq as string) + 1n}`
}

function compareIds (a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt) as [bigint, bigint]
  const [bm, bs] = b.split('-').map(BigInt) as [bigint, bigint]
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1
}

const script = (name: string): string => luaScript(new URL(`lua/${name}.lua`, import.meta.url))
export const LEASE_LUA = script('relay-lease')
export const UNLEASE_LUA = script('relay-unlease')
/** acknowledge and trim in one step: nothing is trimmed that is not delivered or parked */
export const SETTLE_LUA = script('relay-settle')

type Raw = [string, string[] | null]

interface RelayScripts {
  extauthRelayLease (key: string, owner: string, ttlMs: string): Promise<number>
  extauthRelayUnlease (key: string, owner: string): Promise<number>
  extauthRelaySettle (key: string, ...args: string[]): Promise<number>
}

export class RedisOutbox implements Outbox {
  private readonly keys: Keys
  private readonly scripts: RelayScripts
  /** streams whose group this process has made sure of (a group only goes with its stream) */
  private readonly grouped = new Set<string>()

  constructor (private readonly client: Redis | Cluster, prefix: string) {
    this.keys = new Keys(prefix)
    client.defineCommand('extauthRelayLease', { lua: LEASE_LUA, numberOfKeys: 1 })
    client.defineCommand('extauthRelayUnlease', { lua: UNLEASE_LUA, numberOfKeys: 1 })
    client.defineCommand('extauthRelaySettle', { lua: SETTLE_LUA, numberOfKeys: 1 })
    this.scripts = client as unknown as RelayScripts
  }

  async activeBuckets (): Promise<number[]> {
    const out: number[] = []
    // concurrent single-key commands: ioredis writes them back to back to each node, a pipeline in effect,
    // and routes each to its slot's node on a Cluster
    for (let from = 0; from < BUCKETS; from += 256) {
      const lens = await Promise.all(Array.from({ length: Math.min(256, BUCKETS - from) }, async (_, i) => await this.client.xlen(this.keys.bucketStream(from + i))))
      lens.forEach((n, i) => { if (n > 0) out.push(from + i) })
    }
    return out
  }

  async lease (bucket: number, owner: string, ttlMs: number): Promise<boolean> {
    return await this.scripts.extauthRelayLease(this.keys.relayLease(bucket), owner, String(ttlMs)) === 1
  }

  async unlease (bucket: number, owner: string): Promise<void> {
    await this.scripts.extauthRelayUnlease(this.keys.relayLease(bucket), owner)
  }

  private async ensureGroup (stream: string, force = false): Promise<void> {
    if (!force && this.grouped.has(stream)) return
    this.grouped.add(stream)
    try {
      await this.client.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM')
    } catch (err) {
      if (!(err instanceof ReplyError) || !String((err as Error).message).includes('BUSYGROUP')) throw err
    }
  }

  private items (bucket: number, raw: Raw[]): OutboxItem[] {
    return raw.map(([id, f]) => ({ bucket, streamId: id, fields: f === null ? null : pairsToObject(f) }))
  }

  async claim (bucket: number, consumer: string, count: number): Promise<OutboxItem[]> {
    const stream = this.keys.bucketStream(bucket)
    await this.ensureGroup(stream)
    const out: OutboxItem[] = []
    let cursor = '0-0'
    do {
      const reply = await this.client.xautoclaim(stream, GROUP, consumer, 0, cursor, 'COUNT', count) as [string, Raw[], string[]?]
      cursor = reply[0]
      out.push(...this.items(bucket, reply[1]))
      // entries trimmed away while pending (the backlog bound): Redis drops them from the pending list itself
      for (const id of reply[2] ?? []) out.push({ bucket, streamId: id, fields: null })
    } while (cursor !== '0-0' && out.length < count * 10)
    return out.sort((a, b) => compareIds(a.streamId, b.streamId))
  }

  async read (bucket: number, consumer: string, count: number): Promise<OutboxItem[]> {
    const stream = this.keys.bucketStream(bucket)
    const once = async (): Promise<OutboxItem[]> => {
      const reply = await this.client.xreadgroup('GROUP', GROUP, consumer, 'COUNT', count, 'STREAMS', stream, '>') as Array<[string, Raw[]]> | null
      return reply === null ? [] : this.items(bucket, reply[0]?.[1] ?? [])
    }
    try {
      return await once()
    } catch (err) {
      if (!(err instanceof ReplyError) || !String((err as Error).message).includes('NOGROUP')) throw err
      await this.ensureGroup(stream, true)
      return await once()
    }
  }

  async settle (bucket: number, ids: string[], keepFrom: string | null, lastId: string | null): Promise<void> {
    const minId = keepFrom ?? (lastId !== null ? nextId(lastId) : '')
    await this.scripts.extauthRelaySettle(this.keys.bucketStream(bucket), minId, ...ids)
  }

  async oldest (buckets: number[]): Promise<Array<string | null>> {
    return await Promise.all(buckets.map(async (b) => {
      const r = await this.client.xrange(this.keys.bucketStream(b), '-', '+', 'COUNT', 1)
      return r[0]?.[0] ?? null
    }))
  }

  async takeDropped (buckets: number[]): Promise<number> {
    const counts = await Promise.all(buckets.map(async (b) => await this.client.getdel(`${this.keys.bucketStream(b)}:dropped`)))
    return counts.reduce((sum, c) => sum + Number(c ?? 0), 0)
  }

  async park (p: ParkedEvent): Promise<void> {
    await this.client.hset(this.keys.failedEvents(), p.event.id, JSON.stringify(p))
  }

  async parked (): Promise<ParkedEvent[]> {
    const all = await this.client.hvals(this.keys.failedEvents())
    return all.map((v) => JSON.parse(v) as ParkedEvent).sort((a, b) => a.parkedAtMs - b.parkedAtMs)
  }

  async getParked (id: string): Promise<ParkedEvent | null> {
    const v = await this.client.hget(this.keys.failedEvents(), id)
    return v === null ? null : JSON.parse(v) as ParkedEvent
  }

  async unpark (id: string): Promise<void> {
    await this.client.hdel(this.keys.failedEvents(), id)
  }
}

/** The embedded store's outbox: one process, so no other consumer and no lease to share. */
export class MemoryOutbox implements Outbox {
  /** the last entry handed out, per bucket */
  private readonly readUpTo = new Map<number, string>()
  private readonly failed = new Map<string, ParkedEvent>()
  private droppedSeen = 0

  constructor (private readonly store: MemoryStore) {}

  async activeBuckets (): Promise<number[]> { return this.store.outboxBuckets() }
  async lease (): Promise<boolean> { return true }
  async unlease (): Promise<void> {}

  async claim (bucket: number): Promise<OutboxItem[]> {
    // what was handed out and not settled is still at the head of the outbox
    const upTo = this.readUpTo.get(bucket)
    if (upTo === undefined) return []
    return this.store.outboxEntries(bucket).filter((e) => compareIds(e.id, upTo) <= 0).map((e) => ({ bucket, streamId: e.id, fields: e.fields }))
  }

  async read (bucket: number, _consumer: string, count: number): Promise<OutboxItem[]> {
    const upTo = this.readUpTo.get(bucket)
    const fresh = this.store.outboxEntries(bucket).filter((e) => upTo === undefined || compareIds(e.id, upTo) > 0).slice(0, count)
    const last = fresh[fresh.length - 1]
    if (last !== undefined) this.readUpTo.set(bucket, last.id)
    return fresh.map((e) => ({ bucket, streamId: e.id, fields: e.fields }))
  }

  async settle (bucket: number, _ids: string[], keepFrom: string | null, lastId: string | null): Promise<void> {
    const entries = this.store.outboxEntries(bucket)
    const n = keepFrom !== null
      ? entries.findIndex((e) => compareIds(e.id, keepFrom) >= 0)
      : lastId !== null ? entries.findIndex((e) => compareIds(e.id, lastId) > 0) : 0
    this.store.trimOutbox(bucket, n < 0 ? entries.length : n)
  }

  async oldest (buckets: number[]): Promise<Array<string | null>> {
    return buckets.map((b) => this.store.outboxEntries(b)[0]?.id ?? null)
  }

  async takeDropped (): Promise<number> {
    const n = this.store.outboxDropped - this.droppedSeen
    this.droppedSeen = this.store.outboxDropped
    return n
  }

  async park (p: ParkedEvent): Promise<void> { this.failed.set(p.event.id, p) }
  async parked (): Promise<ParkedEvent[]> { return [...this.failed.values()].sort((a, b) => a.parkedAtMs - b.parkedAtMs) }
  async getParked (id: string): Promise<ParkedEvent | null> { return this.failed.get(id) ?? null }
  async unpark (id: string): Promise<void> { this.failed.delete(id) }
}
