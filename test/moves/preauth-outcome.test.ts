// Pre-auth capture and cancellation: recorded before the gateway is asked; 96 PREVIOUSLY AUTHORIZED is the
// earlier ask's approval; an answer that does not prove a refusal is a retryable failure, not DECLINED.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import { PreAuthService } from '../../src/moves/preauths.js'
import { parseTxnAnswer } from '../../src/adapters/gateway/parse.js'
import { interpret } from '../../src/adapters/transport/http.js'
import type { GatewayAdapter } from '../../src/adapters/gateway/adapter.js'

const txn = (code: string, detail?: string) => (): unknown =>
  parseTxnAnswer({ status: '50021', pgErrorCode: code, ...(detail !== undefined ? { pgErrorDetail: detail } : {}), transactionId: 'PG1' })
const OK = (): unknown => parseTxnAnswer({ status: '50020', pgErrorCode: '0', transactionId: 'PG1' })
const LOST = (): unknown => ({ kind: 'failed', reason: 'timeout', retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' })

function rig (answers: Array<() => unknown>): { store: MemoryStore, preauths: PreAuthService, calls: () => number } {
  const store = new MemoryStore()
  let n = 0
  const next = async (): Promise<unknown> => (answers[n++] ?? (() => { throw new Error('no more answers') }))()
  const gateway = { preAuthCompletion: next, preAuthCancellation: next } as unknown as GatewayAdapter
  return { store, preauths: new PreAuthService(store, gateway), calls: () => n }
}

t.test('the call is recorded before the gateway is asked', async (t) => {
  const store = new MemoryStore()
  let seen: unknown = 'not asked'
  const gateway = {
    preAuthCompletion: async () => {
      seen = await store.getLifecycle('preauth', 'PG1:capture')
      return LOST()
    }
  } as unknown as GatewayAdapter
  const r = await new PreAuthService(store, gateway).run('capture', 'PG1', 'M1', 500)
  t.match(seen, { status: 'PENDING', merchantReferenceNo: 'M1', amount: '500' }, 'recorded before the call')
  t.match(r, { status: 'FAILED', retryable: true })
})

for (const action of ['capture', 'cancel'] as const) {
  const done = action === 'capture' ? 'CAPTURED' : 'CANCELLED'
  t.test(`${action}: a lost answer, then 96 PREVIOUSLY AUTHORIZED on the repeat: ${done}`, async (t) => {
    const { preauths, calls } = rig([LOST, txn('96', 'PREVIOUSLY AUTHORIZED')])
    t.match(await preauths.run(action, 'PG1', 'M1', null), { status: 'FAILED', retryable: true })
    t.match(await preauths.run(action, 'PG1', 'M1', null), { status: done, upstream: { code: '96' } })
    t.match(await preauths.run(action, 'PG1', 'M1', null), { status: done, replayed: true })
    t.equal(calls(), 2, 'the replay asks nothing')
  })
}

for (const [name, first] of [
  ['96 SYSTEM ERROR', txn('96', 'SYSTEM ERROR')],
  ['91', txn('91')],
  ['a code outside the table', txn('777')],
  ['51 on HTTP 503', () => interpret({ kind: 'response', status: 503, json: { status: '50021', pgErrorCode: '51', transactionId: 'PG1' }, attempts: 1 }, parseTxnAnswer)]
] as const) {
  t.test(`capture answered ${name}: a retryable failure; the repeat asks again`, async (t) => {
    const { preauths, calls } = rig([first, OK])
    t.match(await preauths.run('capture', 'PG1', 'M1', 500), { status: 'FAILED', retryable: true })
    t.match(await preauths.run('capture', 'PG1', 'M1', 500), { status: 'CAPTURED', upstream: { code: '00' } })
    t.equal(calls(), 2)
  })
}

t.test('a certain refusal is a final DECLINED, replayed without asking again', async (t) => {
  const { preauths, calls } = rig([txn('13', 'Amount Error')])
  t.match(await preauths.run('capture', 'PG1', 'M1', 500), { status: 'DECLINED', upstream: { code: '13' } })
  t.match(await preauths.run('capture', 'PG1', 'M1', 500), { status: 'DECLINED', replayed: true })
  t.equal(calls(), 1)
})

t.test('a repeat with other values is a conflict, also while the first is not settled', async (t) => {
  const { preauths } = rig([LOST])
  await preauths.run('capture', 'PG1', 'M1', 500)
  await t.rejects(preauths.run('capture', 'PG1', 'M1', 600), { code: 'EXTAUTH_ERR_REFERENCE_CONFLICT' })
})
