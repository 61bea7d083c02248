// An authorize answer that does not prove the issuer refused (91: the issuer did not answer in time; 96
// SYSTEM ERROR, 399, 400, a non-2xx) may come after the card was charged: the load is not final, and the
// repeat authorizes again, hearing 96 PREVIOUSLY AUTHORIZED if the charge went through.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { LoadService } from '../../src/moves/loads.js'
import { parseTxnAnswer } from '../../src/adapters/gateway/parse.js'
import { interpret } from '../../src/adapters/transport/http.js'
import type { GatewayAdapter } from '../../src/adapters/gateway/adapter.js'

const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '123', currencyCode: '356', nameOnCard: 'A', mobileNumber: '919800000001' }
const AGAIN = { status: '50021', pgErrorCode: '96', pgErrorDetail: 'PREVIOUSLY AUTHORIZED', transactionId: 'PG1' }

async function rig (first: () => unknown): Promise<{ store: MemoryStore, loads: LoadService, calls: () => number }> {
  const store = new MemoryStore()
  await store.putCustomer('U1', {})
  let calls = 0
  const gateway = {
    generateOtp: async () => ({ kind: 'ok', pgTransactionId: 'PG1' }),
    verifyOtp: async () => ({ kind: 'ok' }),
    authorize: async () => {
      calls++
      return calls === 1 ? first() : parseTxnAnswer(AGAIN)
    }
  } as unknown as GatewayAdapter
  const loads = new LoadService(store, gateway)
  await loads.start({ urn: 'U1', amount: 500, merchantReferenceNo: 'M1', ...CARD } as never)
  return { store, loads, calls: () => calls }
}

const UNSURE: Array<[string, () => unknown]> = [
  ['91 (issuer did not answer in time)', () => parseTxnAnswer({ status: '50021', pgErrorCode: '91', pgErrorDetail: 'ERROR', transactionId: 'PG1' })],
  ['96 SYSTEM ERROR', () => parseTxnAnswer({ status: '50021', pgErrorCode: '96', pgErrorDetail: 'SYSTEM ERROR', transactionId: 'PG1' })],
  ['400 General Error', () => parseTxnAnswer({ status: '50021', pgErrorCode: '400', transactionId: 'PG1' })],
  ['a code outside the table', () => parseTxnAnswer({ status: '50021', pgErrorCode: '777', transactionId: 'PG1' })],
  ['51 on HTTP 502', () => interpret({ kind: 'response', status: 502, json: { status: '50021', pgErrorCode: '51', transactionId: 'PG1' }, attempts: 1 }, parseTxnAnswer)]
]

for (const [name, first] of UNSURE) {
  t.test(`authorize answered ${name}: not final; the repeat learns 96 PREVIOUSLY AUTHORIZED and credits`, async (t) => {
    const { store, loads, calls } = await rig(first)
    const answer = await loads.verify('M1', '123456')
    t.not(answer.status, 'DECLINED', 'a maybe is not a final decline')
    t.match(answer, { status: 'FAILED', retryable: true })
    t.equal((await loads.get('M1')).status, 'OTP_VERIFIED', 'the load waits for a repeat of authorize')
    const again = await loads.verify('M1', '123456')
    t.equal(calls(), 2, 'the repeat asks authorize again')
    t.equal(again.status, 'LOADED', 'the repeat should authorize again and learn 96 PREVIOUSLY AUTHORIZED')
    t.equal((await store.getCustomer('U1'))?.available, 500, 'the card was charged: the wallet must be credited')
  })
}

t.test('authorize answered 51 NON SUFFICIENT FUNDS on HTTP 200: a final DECLINED, nothing credited', async (t) => {
  const { store, loads, calls } = await rig(() => parseTxnAnswer({ status: '50021', pgErrorCode: '51', transactionId: 'PG1' }))
  t.match(await loads.verify('M1', '123456'), { status: 'DECLINED', upstream: { code: '51' } })
  t.match(await loads.verify('M1', '123456'), { status: 'DECLINED', replayed: true })
  t.equal(calls(), 1)
  t.equal((await store.getCustomer('U1'))?.available, 0)
})
