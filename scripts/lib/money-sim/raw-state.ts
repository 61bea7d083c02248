// Reads what the Store interface does not show: the limit windows, straight from the store's own data
// (the memory store's map, Redis's sorted sets), and ends lifecycle locks whose time is up on the
// simulation's clock (Redis counts their expiry on its own clock).
import { Keys } from '../../../src/store/keys.js'
import type { MemoryStore } from '../../../src/store/memory.js'
import type { RedisStore } from '../../../src/store/redis.js'
import type { Store } from '../../../src/store/types.js'

export interface RawEntry { member: string, score: number }

export interface RawState {
  window: (urn: string, last4: string, ruleId: string, per: 'urn' | 'card') => Promise<RawEntry[]>
  dropLock: (kind: string, id: string) => Promise<void>
}

export function rawState (store: Store, prefix: string): RawState {
  const keys = new Keys(prefix)
  if (store.kind === 'memory') {
    const windows = (store as unknown as { windows: Map<string, RawEntry[]> }).windows
    return {
      window: async (urn, last4, ruleId, per) => (windows.get(keys.limit(urn, last4, { ruleId, per })) ?? []).map((e) => ({ member: e.member, score: e.score })),
      dropLock: async () => {}
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
    dropLock: async (kind, id) => { await client.del(keys.lifecycleLock(kind, id)) }
  }
}

export type { MemoryStore }
