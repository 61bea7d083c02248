// A call that outlives its lock: the newer call's record wins (saves are compare-and-set on a revision),
// and the older call's platform answer is settled against the record as it now stands, never over it.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { TransferService } from '../../src/moves/transfers.js'
import type { PrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'

const REQ = { clientTxnId: 'T1', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'a', toAccountNumber: 'b', amount: 400 }

async function seeded (clock: () => number): Promise<MemoryStore> {
  const store = new MemoryStore({ clock })
  await store.putCustomer('A', {}); await store.putCustomer('B', {})
  await store.credit('A', 1000, 'seed')
  return store
}

t.test('lock expires during a slow send: a second caller releases the hold, the first then completes: no money created', async (t) => {
  let now = 1_700_000_000_000
  const clock = (): number => now
  const store = await seeded(clock)
  let release!: () => void
  const slow = new Promise<void>((resolve) => { release = resolve })
  let sends = 0
  const prepaid = {
    sendTransfer: async () => {
      sends++
      if (sends === 1) { await slow; return { kind: 'ok', responseToken: 'tok' } } // the platform moved the money
      return { kind: 'failed', reason: 'transport', retryable: true, sent: false, attempts: 1, detail: 'ECONNREFUSED' }
    },
    readTransfer: async () => ({ kind: 'ok', clientTxnId: 'T1', ledgerTransactionId: 'L1', transactionAmount: 400, senders: [], receivers: [] })
  } as unknown as PrepaidAdapter
  const transfers = new TransferService(store, prepaid, clock, 60_000)
  const first = transfers.transfer(REQ)
  // eslint-disable-next-line no-unmodified-loop-condition -- the stub platform counts its sends while this loop yields
  while (sends < 1) await new Promise((resolve) => setImmediate(resolve))
  now += 61_000 // the first call outlives its lock
  const second = await transfers.transfer(REQ)
  t.match(second, { status: 'FAILED', retryable: true })
  release()
  const done = await first
  t.equal(done.status, 'TRANSFERRED')
  const a = (await store.getCustomer('A'))?.available
  const b = (await store.getCustomer('B'))?.available
  t.equal(a! + b!, 1000, `money conserved (A ${a}, B ${b})`)
  t.same([a, b], [600, 400], 'the store agrees with the platform, which moved 400')
  t.match(await transfers.get('T1'), { status: 'TRANSFERRED', ledgerTransactionId: 'L1' })
})

t.test('a call whose lock was taken by another before it asks the platform stops without asking', async (t) => {
  let now = 1_700_000_000_000
  const clock = (): number => now
  const store = await seeded(clock)
  let sends = 0
  const inner = store.debit.bind(store)
  // the hold's debit is slow enough for the lock to expire and another caller to take it
  const slowStore = Object.assign(Object.create(store) as MemoryStore, {
    debit: async (urn: string, amount: number, ref: string) => {
      now += 61_000
      t.equal(await store.lockLifecycle('transfer', 'T1', 60_000, 'other'), true, 'another call took the expired lock')
      return await inner(urn, amount, ref)
    }
  })
  const prepaid = {
    sendTransfer: async () => { sends++; return { kind: 'ok', responseToken: 'tok' } },
    readTransfer: async () => { throw new Error('not reached') }
  } as unknown as PrepaidAdapter
  const transfers = new TransferService(slowStore, prepaid, clock, 60_000)
  await t.rejects(transfers.transfer(REQ), { code: 'EXTAUTH_ERR_IN_PROGRESS' })
  t.equal(sends, 0, 'nothing was sent')
  t.match(await transfers.get('T1'), { status: 'PENDING', held: true }, 'the record names the hold: the repeat settles it')
})

t.test('a save over a record a newer call has changed is refused', async (t) => {
  const store = new MemoryStore()
  await store.putLifecycle('transfer', 'X', { rev: 1, n: 1 }, 0)
  await store.putLifecycle('transfer', 'X', { rev: 2, n: 2 }, 1)
  await t.rejects(store.putLifecycle('transfer', 'X', { rev: 2, n: 'stale' }, 1), { code: 'EXTAUTH_ERR_IN_PROGRESS' })
  t.same(await store.getLifecycle('transfer', 'X'), { rev: 2, n: 2 })
})
