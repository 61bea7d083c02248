// The stores a simulation runs on: the memory store on the simulated clock, a Redis server under a key
// prefix of the run's own (deleted afterwards), or a Redis Cluster.
import { randomBytes } from 'node:crypto'
import { MemoryStore } from '../../../src/store/memory.js'
import { RedisStore, createRedisClient } from '../../../src/store/redis.js'
import { deleteByPrefix } from '../redis-keys.js'
import type { StoreUnderTest } from './engine.js'

export function memoryStore (): (clock: () => number) => Promise<StoreUnderTest> {
  return async (clock) => {
    const store = new MemoryStore({ clock })
    return { store, prefix: '', close: async () => { await store.close() } }
  }
}

export function simPrefix (): string {
  return `extauth-sim:${randomBytes(6).toString('hex')}:`
}

export function redisStore (url: string): () => Promise<StoreUnderTest> {
  return async () => {
    const prefix = simPrefix()
    const store = new RedisStore(createRedisClient({ url }), { prefix })
    await store.connect()
    return {
      store,
      prefix,
      close: async () => {
        await store.close()
        await deleteByPrefix(url, prefix)
      }
    }
  }
}

/** On a cluster the keys stay: the cluster is the caller's, and goes with its nodes. */
export function clusterStore (nodes: Array<{ host: string, port: number }>): () => Promise<StoreUnderTest> {
  return async () => {
    const prefix = simPrefix()
    const store = new RedisStore(createRedisClient({ clusterNodes: nodes }), { prefix })
    await store.connect()
    return { store, prefix, close: async () => { await store.close() } }
  }
}
