import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { settlementContract } from './contract.js'

settlementContract(t, async () => new MemoryStore())

t.test('a hold whose decision is gone before an expiry run is released all the same', async (t) => {
  const { settlementFor } = await import('../../src/settlement/for-store.js')
  const { expireDue } = await import('../../src/settlement/expiry.js')
  const { authInput, funded } = await import('../store/contract.js')
  let now = Date.now()
  const store = new MemoryStore({ clock: () => now })
  const urn = await funded(store, 1000)
  const input = authInput(urn, { debitAmount: 300, fingerprint: 'o', nowMs: now, deadlineAtMs: now + 5000, holdExpiresAtMs: now + 1000 })
  t.equal((await store.authorize(input)).code, '00')
  now += 30 * 86_400_000
  t.equal(await store.getDecision(urn, input.reference), null, 'the decision is forgotten')
  t.equal(await expireDue(settlementFor(store), now), 1)
  t.match(await store.getCustomer(urn), { available: 1000, held: 0 })
})
