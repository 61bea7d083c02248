// A load's merchantReferenceNo used again after its settled record and its credit's reference were forgotten
// (the record 30 days after it was LOADED, the credit's reference after DECISION_RETENTION_DAYS): to extauth
// it is a new load, and the gateway, which charged the card for the first, answers its authorize 96
// PREVIOUSLY AUTHORIZED. That answer to the new load's only authorize is about the first load (credited then,
// as a rule, but no longer known here): the new one is FAILED with a reconcile note and credits nothing (the money simulation, seed 26112601, 45,708 steps: credited
// twice). On both stores; on Redis the forgetting is the two keys' expiry, done at once.
import t, { type Test } from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import type { RedisStore } from '../../src/store/redis.js'
import type { Store } from '../../src/store/types.js'
import { LIFECYCLE_TTL_SECONDS } from '../../src/store/types.js'
import { LoadService } from '../../src/moves/loads.js'
import { parseTxnAnswer } from '../../src/adapters/gateway/parse.js'
import type { GatewayAdapter } from '../../src/adapters/gateway/adapter.js'
import { sharedRedisStore } from '../helpers/redis.js'

const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '123', currencyCode: '356', nameOnCard: 'A', mobileNumber: '919800000001' }
const AMOUNT = 1756

/** The gateway's book of one merchantReferenceNo: one transaction, charged once, answered 96 after that. */
function gateway (): { adapter: GatewayAdapter, charges: () => number, authorizes: () => number } {
  let charged = false
  let charges = 0
  let authorizes = 0
  const adapter = {
    generateOtp: async () => ({ kind: 'ok', pgTransactionId: 'PG1' }),
    verifyOtp: async () => ({ kind: 'ok', pgTransactionId: 'PG1' }),
    authorize: async () => {
      authorizes++
      if (charged) return parseTxnAnswer({ status: '50021', pgErrorCode: '96', pgErrorDetail: 'PREVIOUSLY AUTHORIZED', transactionId: 'PG1' })
      charged = true
      charges++
      return { kind: 'ok', transactionId: 'PG1', status: '50020' }
    }
  } as unknown as GatewayAdapter
  return { adapter, charges: () => charges, authorizes: () => authorizes }
}

async function load (loads: LoadService, ref: string): Promise<string> {
  await loads.start({ urn: 'U1', amount: AMOUNT, merchantReferenceNo: ref, ...CARD })
  return (await loads.verify(ref, '123456')).status
}

async function reused (t: Test, store: Store, forget: (ref: string) => Promise<void>): Promise<void> {
  await store.putCustomer('U1', {})
  const g = gateway()
  const loads = new LoadService(store, g.adapter, clock)
  const ref = 'LD:29240'
  t.equal(await load(loads, ref), 'LOADED')
  t.equal((await store.getCustomer('U1'))?.available, AMOUNT)
  await forget(ref)
  t.equal(await store.getLifecycle('load', ref), null, 'the record is forgotten')
  const again = await loads.start({ urn: 'U1', amount: AMOUNT, merchantReferenceNo: ref, ...CARD })
  t.equal(again.replayed, undefined, 'a new load to extauth')
  const a = await loads.verify(ref, '123456')
  t.equal(g.authorizes(), 2)
  t.equal(g.charges(), 1, 'the card was charged once')
  t.match(a, { status: 'FAILED', upstream: { code: '96', description: 'PREVIOUSLY AUTHORIZED' }, reconcile: /earlier load of this merchantReferenceNo/ }, 'the charge is the first load\'s, left to an operator')
  t.equal((await store.getCustomer('U1'))?.available, AMOUNT, 'credited once, for the one charge')
  t.match(await loads.verify(ref, '123456'), { status: 'FAILED', replayed: true })
  t.equal((await store.getCustomer('U1'))?.available, AMOUNT)
}

let now = Date.now()
const clock = (): number => now

t.test('memory: a merchantReferenceNo used again after its load was forgotten is not credited twice', async (t) => {
  const store = new MemoryStore({ clock })
  await reused(t, store, async () => { now += LIFECYCLE_TTL_SECONDS * 1000 + 60_000 })
})

t.test('redis: a merchantReferenceNo used again after its load was forgotten is not credited twice', async (t) => {
  const store: RedisStore = await sharedRedisStore(t)
  await reused(t, store, async (ref) => {
    // what the keys' expiry does: the record and the credit's reference gone
    await store.client.del(store.keys.lifecycle('load', ref), store.keys.moneyOp('U1', 'credit', `load:${ref}`))
  })
})

t.test('a repeat whose first authorize never left, then heard 96 PREVIOUSLY AUTHORIZED, is still not credited twice', async (t) => {
  const store = new MemoryStore({ clock })
  await store.putCustomer('U1', {})
  const g = gateway()
  const loads = new LoadService(store, g.adapter, clock)
  t.equal(await load(loads, 'R2'), 'LOADED')
  now += LIFECYCLE_TTL_SECONDS * 1000 + 60_000
  let first = true
  const flaky = {
    ...g.adapter,
    authorize: async (input: Parameters<GatewayAdapter['authorize']>[0]) => {
      if (first) { first = false; return { kind: 'failed', reason: 'transport', retryable: true, sent: false, attempts: 1, detail: 'ECONNREFUSED' } }
      return await g.adapter.authorize(input)
    }
  } as unknown as GatewayAdapter
  const loads2 = new LoadService(store, flaky, clock)
  await loads2.start({ urn: 'U1', amount: AMOUNT, merchantReferenceNo: 'R2', ...CARD })
  t.match(await loads2.verify('R2', '123456'), { status: 'FAILED', retryable: true })
  t.match(await loads2.verify('R2', '123456'), { status: 'FAILED', upstream: { code: '96' }, reconcile: /earlier load/ }, 'the authorize that never left is not counted')
  t.equal((await store.getCustomer('U1'))?.available, AMOUNT)
})
