// Card-lifecycle records left in the store by earlier versions, mid-call, and repeated after the upgrade:
// each is carried on as the version that wrote it meant (src/moves/earlier-formats.ts), on both stores. The
// records are built by asFormat from a record of today, as the earlier version stored it.
import t from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { failed } from '../../src/adapters/transport/result.js'
import { walletCodeDescription, walletCodeFamily } from '../../src/adapters/prepaid/wallet-codes.js'
import type { PrepaidAdapter, PrepaidDeclined } from '../../src/adapters/prepaid/adapter.js'
import type { GatewayAdapter } from '../../src/adapters/gateway/adapter.js'
import { parseTxnAnswer } from '../../src/adapters/gateway/parse.js'
import { TransferService } from '../../src/moves/transfers.js'
import { UnloadService } from '../../src/moves/unloads.js'
import { LoadService } from '../../src/moves/loads.js'
import { fingerprintOf } from '../../src/moves/held-move.js'
import { asFormat, EARLIER_FORMAT_RECONCILE, LIFECYCLE_FORMATS } from '../../src/moves/earlier-formats.js'

const START = 1000
const AMOUNT = 300
const NOW = Date.now()

type Send = 'duplicate' | 'not-sent' | 'moved'

/** The platform's side: every send answered as `send` says; a token read as the move it made. */
function platform (send: () => Send): { prepaid: PrepaidAdapter, sends: () => number } {
  let sends = 0
  const dup = (id: string): PrepaidDeclined => ({ kind: 'declined', code: '1054', description: walletCodeDescription('1054'), family: walletCodeFamily('1054'), retryable: false, clientTxnId: id })
  const answer = async (id: string): Promise<never> => {
    sends++
    const s = send()
    if (s === 'duplicate') return dup(id) as never
    if (s === 'not-sent') return failed('transport', { retryable: true, sent: false, attempts: 1, detail: 'ECONNREFUSED' }) as never
    return { kind: 'ok', responseToken: `T-${id}` } as never
  }
  const read = async (_token: string, id: string): Promise<never> => ({ kind: 'ok', clientTxnId: id, ledgerTransactionId: 'L1', transactionAmount: AMOUNT }) as never
  const prepaid = {
    sendTransfer: async (input: { clientTxnId: string }) => await answer(input.clientTxnId),
    sendUnload: async (input: { clientTxnId: string }) => await answer(input.clientTxnId),
    readTransfer: read,
    readUnload: read,
    unloads: true
  } as unknown as PrepaidAdapter
  return { prepaid, sends: () => sends }
}

async function storeOf (t: Parameters<typeof sharedRedisStore>[0], kind: 'memory' | 'redis'): Promise<Store> {
  return kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
}

const TRANSFER = (id: string): Parameters<TransferService['transfer']>[0] => ({ clientTxnId: id, fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B', amount: AMOUNT })
const UNLOAD = (id: string): Parameters<UnloadService['unload']>[0] => ({
  clientTxnId: id, urn: 'A', customerId: 'CA', accountNumber: 'ACC-A', amount: AMOUNT, fee: 0, receiver: 'A B', sourceType: 0, fundFlowType: 'WALLET_TO_BANK', implId: 'IMPL1', implType: 'BANK', beneficiaryId: 7
})

/** A transfer (or unload) record of today: PENDING, the amount held by hold 1, no answer token kept. */
function heldRecord (kind: 'transfer' | 'unload', id: string): Record<string, unknown> {
  const common = {
    clientTxnId: id, status: 'PENDING', upstream: null, ledgerTransactionId: null, sends: 1, responseToken: null,
    hold: { urn: 'A', amount: String(AMOUNT), seq: 1, state: 'held' }, createdAtMs: NOW - 60_000, updatedAtMs: NOW - 60_000, rev: 3
  }
  if (kind === 'transfer') {
    return { ...common, fromUrn: 'A', toUrn: 'B', amount: String(AMOUNT), fingerprint: fingerprintOf(['A', 'B', AMOUNT, 'ACC-A', 'ACC-B']) }
  }
  const u = UNLOAD(id)
  return {
    ...common,
    urn: 'A',
    customerId: 'CA',
    amount: String(AMOUNT),
    fee: '0',
    requestDateTimeMs: NOW - 60_000,
    fingerprint: fingerprintOf(['A', u.accountNumber, u.amount, u.fee, u.receiver, u.sourceType, u.fundFlowType, u.implId, u.implType, u.beneficiaryId, 'CA', null, null, null])
  }
}

/** What the earlier formats kept that today's record does not. */
function keptOf (kind: 'transfer' | 'unload', id: string): Record<string, unknown> {
  if (kind === 'transfer') return { fromAccountNumber: 'ACC-A', toAccountNumber: 'ACC-B' }
  const { urn: _u, ...rest } = UNLOAD(id)
  return { accountNumber: 'ACC-A', request: { ...rest, requestDateTime: new Date(NOW - 60_000).toISOString() } }
}

/** Puts the customers, the hold the earlier version took (its store reference is today's) and the record. */
async function leftBehind (store: Store, kind: 'transfer' | 'unload', id: string, format: number): Promise<void> {
  await store.putCustomer('A', { customerId: 'CA' })
  await store.putCustomer('B', {})
  await store.credit('A', START, 'opening')
  await store.debit('A', AMOUNT, `${kind}:${id}:hold:1`)
  await store.putLifecycle(kind, id, asFormat(kind, format, heldRecord(kind, id), keptOf(kind, id)))
}

async function repeat (store: Store, prepaid: PrepaidAdapter, kind: 'transfer' | 'unload', id: string): Promise<Record<string, unknown>> {
  if (kind === 'transfer') return await new TransferService(store, prepaid).transfer(TRANSFER(id)) as unknown as Record<string, unknown>
  return await new UnloadService(store, prepaid).unload(UNLOAD(id)) as unknown as Record<string, unknown>
}

/** The formats of a held move that kept a hold as money operations, before `sends` was counted. */
const BEFORE_SENDS = { transfer: [3, 4], unload: [1, 2] } as const

for (const storeKind of ['memory', 'redis'] as const) {
  for (const kind of ['transfer', 'unload'] as const) {
    for (const format of BEFORE_SENDS[kind]) {
      t.test(`${storeKind}: a ${kind} of format ${format} (no send count), held, its answer lost after the platform moved it: a 1054 keeps the hold`, async (t) => {
        const store = await storeOf(t, storeKind)
        const id = `${kind}-f${format}-dup`
        await leftBehind(store, kind, id, format)
        const p = platform(() => 'duplicate')
        const a = await repeat(store, p.prepaid, kind, id)
        t.equal(p.sends(), 1, 'the repeat sends again')
        t.match(a, { status: 'FAILED', held: true, reconcile: String, upstream: { code: '1054' } }, 'the platform may have moved it: left to an operator, held')
        t.equal((await store.getCustomer('A'))?.available, START - AMOUNT, 'the money the platform moved is not given back')
        t.equal((await store.getCustomer('B'))?.available ?? 0, 0)
      })

      t.test(`${storeKind}: a ${kind} of format ${format} (no send count), held, its repeat never reaches the platform: the hold stays`, async (t) => {
        const store = await storeOf(t, storeKind)
        const id = `${kind}-f${format}-unsent`
        await leftBehind(store, kind, id, format)
        const p = platform(() => 'not-sent')
        const a = await repeat(store, p.prepaid, kind, id)
        t.match(a, { status: 'FAILED', retryable: true, held: true })
        t.equal((await store.getCustomer('A'))?.available, START - AMOUNT, 'an earlier send may have moved it: still held')
        // the send after it: the platform had the first one and moved the money
        const again = await repeat(store, platform(() => 'duplicate').prepaid, kind, id)
        t.match(again, { status: 'FAILED', held: true, reconcile: String })
        t.equal((await store.getCustomer('A'))?.available, START - AMOUNT)
      })
    }

    t.test(`${storeKind}: a ${kind} of every format that kept a hold, repeated: the same call, settled once`, async (t) => {
      const store = await storeOf(t, storeKind)
      const formats = LIFECYCLE_FORMATS[kind].map((f) => f.format).filter((f) => kind === 'unload' || f >= 3)
      await store.putCustomer('A', { customerId: 'CA' })
      await store.putCustomer('B', {})
      await store.credit('A', START * formats.length, 'opening')
      for (const format of formats) {
        const id = `${kind}-f${format}-ok`
        await store.debit('A', AMOUNT, `${kind}:${id}:hold:1`)
        await store.putLifecycle(kind, id, asFormat(kind, format, heldRecord(kind, id), keptOf(kind, id)))
        const a = await repeat(store, platform(() => 'moved').prepaid, kind, id)
        t.match(a, { status: kind === 'transfer' ? 'TRANSFERRED' : 'UNLOADED' }, `format ${format}: not a conflict, settled`)
        const stored = await store.getLifecycle<Record<string, unknown>>(kind, id)
        t.notOk(stored !== null && ('fromAccountNumber' in stored || 'request' in stored || 'accountNumber' in stored), `format ${format}: the values kept are dropped at the next save`)
        t.match(await repeat(store, platform(() => 'moved').prepaid, kind, id), { status: a.status, replayed: true })
      }
      t.equal((await store.getCustomer('A'))?.available, (START - AMOUNT) * formats.length, 'each held once')
      t.equal((await store.getCustomer('B'))?.available ?? 0, kind === 'transfer' ? AMOUNT * formats.length : 0, 'each received once')
    })
  }

  t.test(`${storeKind}: a transfer of the formats before holds were money operations, not settled: left to an operator, nothing moved`, async (t) => {
    const store = await storeOf(t, storeKind)
    await store.putCustomer('A', {})
    await store.putCustomer('B', {})
    await store.credit('A', START, 'opening')
    for (const format of [1, 2]) {
      const id = `transfer-f${format}-old`
      await store.putLifecycle('transfer', id, asFormat('transfer', format, heldRecord('transfer', id), keptOf('transfer', id)))
      const p = platform(() => 'moved')
      const a = await repeat(store, p.prepaid, 'transfer', id)
      t.match(a, { status: 'FAILED', retryable: false, reconcile: EARLIER_FORMAT_RECONCILE })
      t.equal(p.sends(), 0, 'the platform is not asked')
    }
    t.equal((await store.getCustomer('A'))?.available, START)
    t.equal((await store.getCustomer('B'))?.available ?? 0, 0)
  })

  t.test(`${storeKind}: a load of every format before the authorize count, OTP_VERIFIED, its authorize's answer lost: 96 PREVIOUSLY AUTHORIZED credits it once`, async (t) => {
    const store = await storeOf(t, storeKind)
    await store.putCustomer('U1', {})
    const gateway = {
      authorize: async () => parseTxnAnswer({ status: '50021', pgErrorCode: '96', pgErrorDetail: 'PREVIOUSLY AUTHORIZED', transactionId: 'PG1' })
    } as unknown as GatewayAdapter
    const loads = new LoadService(store, gateway)
    let expected = 0
    for (const format of [1, 2, 3, 4]) {
      const ref = `LD-f${format}`
      const today = {
        merchantReferenceNo: ref, urn: 'U1', amount: '500', currencyCode: '356', cardLast4: '1111', status: 'OTP_VERIFIED', pgTransactionId: 'PG1',
        upstream: { code: '00', description: 'OTP verified' }, createdAtMs: NOW, updatedAtMs: NOW, rev: 2, authorizes: 1
      }
      await store.putLifecycle('load', ref, asFormat('load', format, today))
      t.match(await loads.verify(ref, '123456'), { status: 'LOADED' }, `format ${format}`)
      expected += 500
      t.match(await loads.verify(ref, '123456'), { status: 'LOADED', replayed: true })
    }
    t.equal((await store.getCustomer('U1'))?.available, expected, 'each credited once')
  })
}
