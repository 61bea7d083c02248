// Reads what the Store interface does not show: the limit windows, straight from the store's own data
// (the memory store's map, Redis's sorted sets), and ends lifecycle locks whose time is up on the
// simulation's clock (Redis counts their expiry on its own clock).
import { Keys } from '../../../src/store/keys.js'
import type { MemoryStore } from '../../../src/store/memory.js'
import { pairsToObject } from '../../../src/store/control-fields.js'
import type { RedisStore } from '../../../src/store/redis.js'
import type { Store } from '../../../src/store/types.js'

export interface RawEntry { member: string, score: number }

/** An outbox entry as the scripts wrote it (fields t, u, d, x). */
export interface RawEvent { id: string, fields: Record<string, string> }

export interface RawState {
  window: (urn: string, last4: string, ruleId: string, per: 'urn' | 'card') => Promise<RawEntry[]>
  /** the window's running totals (field -> amount; the Redis hash's marker left out) */
  totals: (urn: string, last4: string, ruleId: string, per: 'urn' | 'card') => Promise<Record<string, number>>
  dropLock: (kind: string, id: string) => Promise<void>
  /** the bucket's outbox, oldest first */
  events: (bucket: number) => Promise<RawEvent[]>
  /** removes the bucket's first `count` events, as the relay does once they are delivered */
  trimEvents: (bucket: number, upToId: string, count: number) => Promise<void>
  /** events dropped past the backlog bound, all buckets */
  droppedEvents: (buckets: Iterable<number>) => Promise<number>
}

export function rawState (store: Store, prefix: string): RawState {
  const keys = new Keys(prefix)
  if (store.kind === 'memory') {
    const windows = (store as unknown as { windows: Map<string, RawEntry[]> }).windows
    const totals = (store as unknown as { windowTotals: Map<string, { fields: Map<string, number> }> }).windowTotals
    const mem = store as MemoryStore
    return {
      window: async (urn, last4, ruleId, per) => (windows.get(keys.limit(urn, last4, { ruleId, per })) ?? []).map((e) => ({ member: e.member, score: e.score })),
      totals: async (urn, last4, ruleId, per) => Object.fromEntries(totals.get(keys.limit(urn, last4, { ruleId, per }))?.fields ?? []),
      dropLock: async () => {},
      events: async (bucket) => mem.outboxEntries(bucket).map((e) => ({ id: e.id, fields: { ...e.fields } })),
      trimEvents: async (bucket, _upToId, count) => { mem.trimOutbox(bucket, count) },
      droppedEvents: async () => mem.outboxDropped
    }
  }
  const client = (store as RedisStore).client
  return {
    window: async (urn, last4, ruleId, per) => {
      const flat = await client.zrange(keys.limit(urn, last4, { ruleId, per }), 0, -1, 'WITHSCORES')
      const out: RawEntry[] = []
      for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i] as string, score: Number(flat[i + 1]) })
      return out
    },
    totals: async (urn, last4, ruleId, per) => {
      const { v: _marker, ...fields } = await client.hgetall(`${keys.limit(urn, last4, { ruleId, per })}:t`)
      return Object.fromEntries(Object.entries(fields).map(([f, x]) => [f, Number(x)]))
    },
    dropLock: async (kind, id) => { await client.del(keys.lifecycleLock(kind, id)) },
    events: async (bucket) => (await client.xrange(keys.bucketStream(bucket), '-', '+')).map(([id, f]) => ({ id, fields: pairsToObject(f) as Record<string, string> })),
    // the stream's first id past the last event read
    trimEvents: async (bucket, upToId) => {
      const [ms, seq] = upToId.split('-')
      await client.xtrim(keys.bucketStream(bucket), 'MINID', `${ms ?? '0'}-${Number(seq ?? '0') + 1}`)
    },
    droppedEvents: async (buckets) => {
      let n = 0
      for (const b of buckets) n += Number(await client.get(`${keys.bucketStream(b)}:dropped`) ?? 0)
      return n
    }
  }
}

export type { MemoryStore }
