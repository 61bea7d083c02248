// A BLOCKED or CLOSED customer sends and unloads nothing (409 WRONG_STATE, nothing held, nothing sent); a
// call that was already under way when the customer was blocked still settles.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { TransferService } from '../../src/moves/transfers.js'
import { UnloadService } from '../../src/moves/unloads.js'
import type { PrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'

const REQ = { clientTxnId: 'T1', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'a', toAccountNumber: 'b', amount: 400 }
const UNLOAD = { clientTxnId: 'U1', urn: 'A', accountNumber: 'a', amount: 300, fee: 0, receiver: 'X', sourceType: 1, fundFlowType: 'UNLOAD', implId: 'I', implType: 'BANK', beneficiaryId: 1 }

async function rig (answers: Array<() => unknown>): Promise<{ store: MemoryStore, transfers: TransferService, unloads: UnloadService, sends: () => number }> {
  const store = new MemoryStore()
  await store.putCustomer('A', { customerId: 'CA' }); await store.putCustomer('B', {})
  await store.credit('A', 1000, 'seed')
  let n = 0
  const send = async (): Promise<unknown> => (answers[n++] ?? (() => { throw new Error('no more answers') }))()
  const prepaid = {
    sendTransfer: send,
    sendUnload: send,
    readTransfer: async () => ({ kind: 'ok', clientTxnId: 'T1', ledgerTransactionId: 'L1', transactionAmount: 400, senders: [], receivers: [] }),
    readUnload: async () => ({ kind: 'ok', clientTxnId: 'U1' })
  } as unknown as PrepaidAdapter
  return { store, transfers: new TransferService(store, prepaid), unloads: new UnloadService(store, prepaid), sends: () => n }
}

for (const status of ['BLOCKED', 'CLOSED'] as const) {
  t.test(`a ${status} sender: transfer and unload refused with WRONG_STATE, nothing held or sent`, async (t) => {
    const { store, transfers, unloads, sends } = await rig([])
    await store.putCustomer('A', { status })
    await t.rejects(transfers.transfer(REQ), { code: 'EXTAUTH_ERR_WRONG_STATE' })
    await t.rejects(unloads.unload(UNLOAD), { code: 'EXTAUTH_ERR_WRONG_STATE' })
    t.equal((await store.getCustomer('A'))?.available, 1000)
    t.equal(sends(), 0)
    await t.rejects(transfers.get('T1'), { code: 'EXTAUTH_ERR_TRANSFER_NOT_FOUND' }, 'no record kept')
  })
}

t.test('a transfer under way when the sender is blocked still settles on its repeat', async (t) => {
  const lost = (): unknown => ({ kind: 'failed', reason: 'timeout', retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' })
  const { store, transfers } = await rig([lost, () => ({ kind: 'ok', responseToken: 'tok' })])
  t.match(await transfers.transfer(REQ), { status: 'FAILED', held: true })
  await store.putCustomer('A', { status: 'BLOCKED' })
  t.match(await transfers.transfer(REQ), { status: 'TRANSFERRED' })
  t.equal((await store.getCustomer('B'))?.available, 400)
})
