// The settlement of a store: the scripts on Redis, the same steps in process on the embedded store.
import type { Store } from '../store/types.js'
import { MemoryStore } from '../store/memory.js'
import { RedisStore } from '../store/redis.js'
import { MemorySettlement } from './memory-settlement.js'
import { RedisSettlement, type RedisSettlementOptions } from './redis-settlement.js'
import type { SettlementStore } from './types.js'

const made = new WeakMap<Store, SettlementStore>()

/** one per store (the embedded one keeps its settlement state beside the store's) */
export function settlementFor (store: Store, opts: RedisSettlementOptions = {}): SettlementStore {
  let s = made.get(store)
  if (s !== undefined) return s
  if (store instanceof MemoryStore) s = new MemorySettlement(store)
  else if (store instanceof RedisStore) s = new RedisSettlement(store, opts)
  else throw new Error(`no settlement for a ${store.kind} store`)
  made.set(store, s)
  return s
}
