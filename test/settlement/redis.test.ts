import t from 'tap'
import { sharedRedisStore } from '../helpers/redis.js'
import { settlementContract } from './contract.js'

settlementContract(t, async (t) => await sharedRedisStore(t))

t.test('a hold whose decision is gone before an expiry run is released all the same', async (t) => {
  const { settlementFor } = await import('../../src/settlement/for-store.js')
  const { expireDue } = await import('../../src/settlement/expiry.js')
  const { authInput, funded } = await import('../store/contract.js')
  const store = await sharedRedisStore(t)
  const urn = await funded(store, 1000)
  const input = authInput(urn, { debitAmount: 300, fingerprint: 'o', holdExpiresAtMs: Date.now() + 1000 })
  t.equal((await store.authorize(input)).code, '00')
  await store.client.del(store.keys.decision(urn, input.reference))
  t.equal(await expireDue(settlementFor(store), Date.now() + 2000), 1)
  t.match(await store.getCustomer(urn), { available: 1000, held: 0 })
})
