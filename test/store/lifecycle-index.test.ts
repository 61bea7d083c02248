// Each customer's index of its lifecycle records, on both stores (the Cluster's path: cluster.test.ts).
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { lifecycleIndexContract } from './lifecycle-contract.js'

t.test('memory', async (t) => { lifecycleIndexContract(t, async () => new MemoryStore()) })
t.test('redis', async (t) => { lifecycleIndexContract(t, async (t) => await sharedRedisStore(t)) })
