// A code that does not prove the platform refused (a system error, a code outside its table, any code on
// a non-2xx status) keeps the hold: the platform may have moved the money.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { TransferService } from '../../src/moves/transfers.js'
import { parseTokenAnswer } from '../../src/adapters/prepaid/parse.js'
import { interpret } from '../../src/adapters/transport/http.js'
import type { PrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'

const REQ = { clientTxnId: 'T1', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'a', toAccountNumber: 'b', amount: 400 }

async function rig (status: number, body: Record<string, unknown>): Promise<{ store: MemoryStore, transfers: TransferService, sends: () => number }> {
  const store = new MemoryStore()
  await store.putCustomer('A', {}); await store.putCustomer('B', {})
  await store.credit('A', 1000, 'seed')
  let sends = 0
  const prepaid = {
    sendTransfer: async () => {
      sends++
      return interpret({ kind: 'response', status, json: body, attempts: 1 }, parseTokenAnswer)
    },
    readTransfer: async () => { throw new Error('not reached') }
  } as unknown as PrepaidAdapter
  return { store, transfers: new TransferService(store, prepaid), sends: () => sends }
}

t.test('fundTransfer answered HTTP 504 with a 1052 body: the transfer is not final and the amount stays held', async (t) => {
  const answer = interpret({ kind: 'response', status: 504, json: { responseCode: '1052', responseMessage: 'SYSTEM_ERROR' }, attempts: 1 }, parseTokenAnswer)
  t.equal(answer.kind, 'declined', 'the adapter reads the body as a decline')
  const { store, transfers, sends } = await rig(504, { responseCode: '1052', responseMessage: 'SYSTEM_ERROR' })
  const r = await transfers.transfer(REQ)
  t.not(r.status, 'DECLINED', 'an unknown outcome must not be final')
  t.match(r, { status: 'FAILED', retryable: true, held: true })
  t.equal((await store.getCustomer('A'))?.available, 600, 'the amount must stay held while the outcome is unknown')
  const again = await transfers.transfer(REQ)
  t.equal(sends(), 2, 'the repeat asks the platform again')
  t.match(again, { status: 'FAILED', retryable: true, held: true })
})

for (const [status, code] of [[200, '1052'], [200, '424242'], [502, '1055']] as const) {
  t.test(`HTTP ${status} with code ${code}: held, not declined`, async (t) => {
    const { store, transfers } = await rig(status, { responseCode: code })
    t.match(await transfers.transfer(REQ), { status: 'FAILED', retryable: true, held: true })
    t.equal((await store.getCustomer('A'))?.available, 600)
  })
}

t.test('HTTP 200 with a certain refusal (1055 MALFORMED_REQUEST) gives the hold back: DECLINED', async (t) => {
  const { store, transfers } = await rig(200, { responseCode: '1055' })
  t.match(await transfers.transfer(REQ), { status: 'DECLINED', upstream: { code: '1055' } })
  t.equal((await store.getCustomer('A'))?.available, 1000)
})
