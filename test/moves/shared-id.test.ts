// The platform keeps one set of clientTxnIds for transfers and unloads (as its simulator does): an id one
// kind has used is refused for the other before anything is held, and a 1054 on a record's first send
// gives the hold back (no send of ours can have moved money under it).
import t from 'tap'
import { lifecycleRig } from './sims.js'
import { MemoryStore } from '../../src/store/memory.js'
import { TransferService } from '../../src/moves/transfers.js'
import { UnloadService } from '../../src/moves/unloads.js'
import { LIFECYCLE_TTL_SECONDS, type Store } from '../../src/store/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { parseTokenAnswer } from '../../src/adapters/prepaid/parse.js'
import { interpret } from '../../src/adapters/transport/http.js'
import type { PrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'

const UNLOAD = { urn: 'NA', accountNumber: 'ACC-A', amount: '10000', fee: '0', receiver: 'X', sourceType: 1, fundFlowType: 'UNLOAD', implId: 'I', implType: 'BANK', beneficiaryId: 1 }

t.test('an unload reusing a transfer clientTxnId, and a transfer reusing an unload one, are refused before any hold', async (t) => {
  const { sims, store, call } = await lifecycleRig(t)
  for (const w of [{ urn: 'NA', customerId: 'CA', accountNumber: 'ACC-A' }, { urn: 'NB', customerId: 'CB', accountNumber: 'ACC-B' }]) {
    sims.prepaid.wallets.add({ ...w, balance: 50_000 })
    await store.putCustomer(w.urn, { customerId: w.customerId })
    await store.credit(w.urn, 50_000, `seed-${w.urn}`)
  }
  const tr = await call('POST', '/v1/transfers', { clientTxnId: 'SAME1', fromUrn: 'NA', toUrn: 'NB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '1000' })
  t.match(tr.body, { status: 'TRANSFERRED' })
  const ul = await call('POST', '/v1/unloads', { clientTxnId: 'SAME1', ...UNLOAD })
  t.equal(ul.status, 409, 'a clientTxnId already used by a transfer should be refused before any hold')
  t.match(ul.body, { error: 'REFERENCE_CONFLICT' })
  t.equal((await store.getCustomer('NA'))?.available, 49_000, 'nothing held for a refused unload')

  const ul2 = await call('POST', '/v1/unloads', { clientTxnId: 'SAME2', ...UNLOAD })
  t.match(ul2.body, { status: 'UNLOADED' })
  const tr2 = await call('POST', '/v1/transfers', { clientTxnId: 'SAME2', fromUrn: 'NA', toUrn: 'NB', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: '1000' })
  t.equal(tr2.status, 409)
  t.match(tr2.body, { error: 'REFERENCE_CONFLICT' })
  t.equal((await store.getCustomer('NA'))?.available, 39_000, 'only the unload left the wallet')
  t.equal(sims.prepaid.wallets.customer('NA')?.balance, 39_000, 'as on the platform')
})

const REQ = { clientTxnId: 'T1', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'a', toAccountNumber: 'b', amount: 400 }
const DUPLICATE = (): unknown => interpret({ kind: 'response', status: 200, json: { responseCode: '1054', responseMessage: 'DUPLICATE REQUEST' }, attempts: 1 }, parseTokenAnswer)

async function rig (answers: Array<() => unknown>, store: Store = new MemoryStore()): Promise<{ store: Store, transfers: TransferService }> {
  await store.putCustomer('A', {}); await store.putCustomer('B', {})
  await store.credit('A', 1000, 'seed')
  let n = 0
  const prepaid = {
    sendTransfer: async () => (answers[n++] ?? DUPLICATE)(),
    readTransfer: async () => { throw new Error('not reached') }
  } as unknown as PrepaidAdapter
  return { store, transfers: new TransferService(store, prepaid) }
}

t.test('1054 on the first send of a record: the id was not ours to use; the hold goes back, DECLINED', async (t) => {
  const { store, transfers } = await rig([DUPLICATE])
  t.match(await transfers.transfer(REQ), { status: 'DECLINED', upstream: { code: '1054' } })
  t.notMatch(await transfers.get('T1'), { held: true })
  t.equal((await store.getCustomer('A'))?.available, 1000)
})

t.test('1054 on a later send (the first one\'s answer was lost): FAILED with reconcile, the amount stays held', async (t) => {
  const lost = (): unknown => ({ kind: 'failed', reason: 'timeout', retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' })
  const { store, transfers } = await rig([lost, DUPLICATE])
  t.match(await transfers.transfer(REQ), { status: 'FAILED', retryable: true, held: true })
  const r = await transfers.transfer(REQ)
  t.match(r, { status: 'FAILED', retryable: false, held: true, upstream: { code: '1054' } })
  t.type(r.reconcile, 'string')
  t.equal((await store.getCustomer('A'))?.available, 600)
})

for (const kind of ['memory', 'redis'] as const) {
  t.test(`1054 after a send that certainly did not leave: still the only send, the hold goes back, DECLINED (${kind})`, async (t) => {
    const notSent = (): unknown => ({ kind: 'failed', reason: 'transport', retryable: true, sent: false, attempts: 1, detail: 'ECONNREFUSED' })
    const { store, transfers } = await rig([notSent, DUPLICATE], kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t))
    t.match(await transfers.transfer(REQ), { status: 'FAILED', retryable: true })
    t.equal((await store.getCustomer('A'))?.available, 1000, 'nothing held after a send that did not leave')
    const r = await transfers.transfer(REQ)
    t.match(r, { status: 'DECLINED', upstream: { code: '1054' } })
    t.notOk(r.held, 'no send of ours can have moved money under this id: nothing held for an operator')
    t.equal((await store.getCustomer('A'))?.available, 1000)
  })
}

for (const kind of ['memory', 'redis'] as const) {
  t.test(`a send that certainly did not leave, after one whose answer was lost: the hold stays for the repeat to settle (${kind})`, async (t) => {
    // found by the money simulation (seed 4040 on Redis): the platform had moved the money on the first
    // send, the second never left and gave the hold back, and the repeat, short of funds, declined
    const lost = (): unknown => ({ kind: 'failed', reason: 'timeout', retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' })
    const notSent = (): unknown => ({ kind: 'failed', reason: 'transport', retryable: true, sent: false, attempts: 1, detail: 'ECONNREFUSED' })
    const { store, transfers } = await rig([lost, notSent, DUPLICATE], kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t))
    t.match(await transfers.transfer(REQ), { status: 'FAILED', retryable: true, held: true })
    t.match(await transfers.transfer(REQ), { status: 'FAILED', retryable: true, held: true }, 'the first send may have moved the money: still held')
    t.equal((await store.getCustomer('A'))?.available, 600, 'the hold was not given back')
    const r = await transfers.transfer(REQ)
    t.match(r, { status: 'FAILED', retryable: false, held: true, upstream: { code: '1054' } }, 'a 1054 now may be about the first send: for an operator')
    t.type(r.reconcile, 'string')
    t.equal((await store.getCustomer('A'))?.available, 600)
  })
}

t.test('a transfer forgotten after its record expired: an unload reusing its id is sent, the platform\'s 1054 gives the hold back', async (t) => {
  let now = Date.UTC(2026, 0, 1)
  const clock = (): number => now
  const store = new MemoryStore({ clock })
  await store.putCustomer('A', { customerId: 'CA' }); await store.putCustomer('B', {})
  await store.credit('A', 1000, 'seed')
  const platformIds = new Set<string>()
  const platform = (id: string): unknown => {
    if (platformIds.has(id)) return DUPLICATE()
    platformIds.add(id)
    return { kind: 'ok', responseToken: `tok-${id}` }
  }
  const prepaid = {
    sendTransfer: async (input: { clientTxnId: string }) => platform(input.clientTxnId),
    readTransfer: async () => ({ kind: 'ok', ledgerTransactionId: 'L1' }),
    sendUnload: async (input: { clientTxnId: string }) => platform(input.clientTxnId),
    readUnload: async () => { throw new Error('not reached: the platform refused the send') }
  } as unknown as PrepaidAdapter
  const transfers = new TransferService(store, prepaid, clock)
  const unloads = new UnloadService(store, prepaid, clock)
  const unload = { clientTxnId: 'T1', urn: 'A', accountNumber: 'a', amount: 100, fee: 5, receiver: 'X', sourceType: 1, fundFlowType: 'UNLOAD', implId: 'I', implType: 'BANK', beneficiaryId: 1 }
  t.match(await transfers.transfer(REQ), { status: 'TRANSFERRED' })
  // while the transfer's record is kept, the id is refused before anything is held
  now += LIFECYCLE_TTL_SECONDS * 1000 - 1
  await t.rejects(unloads.unload(unload), { code: 'REFERENCE_CONFLICT' })
  t.equal(platformIds.size, 1, 'the platform was not asked')
  // once it has expired, extauth cannot know the id was used: the platform's refusal of the only send is a decline
  now += 1
  t.equal(await store.getLifecycle('transfer', 'T1'), null, 'the transfer record is past its lifetime')
  t.match(await unloads.unload(unload), { status: 'DECLINED', upstream: { code: '1054' } })
  t.notMatch(await unloads.get('T1'), { held: true })
  t.equal((await store.getCustomer('A'))?.available, 600, 'only the transfer left the wallet: the unload\'s hold went back')
})
