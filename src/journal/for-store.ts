// The journal reader of whichever store the service runs on.
import type { Store } from '../store/types.js'
import { MemoryStore } from '../store/memory.js'
import { RedisStore } from '../store/redis.js'
import { MemoryJournal, RedisJournal, type JournalReader } from './source.js'

export function journalFor (store: Store): JournalReader | null {
  if (store instanceof RedisStore) return new RedisJournal(store.client, store.keys.prefix)
  if (store instanceof MemoryStore) return new MemoryJournal(store)
  return null
}
