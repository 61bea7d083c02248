// A card-lifecycle record left FAILED with a reconcile note is queued as a lifecycle_failed exception, once,
// and its statement line settles it without moving the held money twice (docs/operations/settlement.md), on
// both stores: through the transfer service with the hook services.ts wires, the line through the import's
// matching, the resolution through the admin API's.
import t, { type Test } from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { TransferService } from '../../src/moves/transfers.js'
import type { PrepaidAdapter } from '../../src/adapters/prepaid/adapter.js'
import { parseTokenAnswer } from '../../src/adapters/prepaid/parse.js'
import { interpret } from '../../src/adapters/transport/http.js'
import { createLogger } from '../../src/logger.js'
import { settlementFor } from '../../src/settlement/for-store.js'
import { lifecycleVerdict } from '../../src/settlement/lifecycle-match.js'
import { lifecycleFailedHook, openLifecycleFailed } from '../../src/settlement/lifecycle-failed.js'
import { resolveException } from '../../src/settlement/resolve.js'
import type { Posting, SettlementStore } from '../../src/settlement/types.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { posting } from './contract.js'

type Make = (t: Test) => Promise<Store>
const log = createLogger('silent')

const DUPLICATE = (): unknown => interpret({ kind: 'response', status: 200, json: { responseCode: '1054', responseMessage: 'DUPLICATE REQUEST' }, attempts: 1 }, parseTokenAnswer)
const LOST = (): unknown => ({ kind: 'failed', reason: 'timeout', retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' })

/**
 * A transfer of 400 from A (1000) to B whose first send's answer is lost and whose repeat meets 1054, its
 * lifecycle_failed exceptions opened in `settlement`; not yet called.
 */
async function lostThenDuplicate (store: Store, settlement: SettlementStore): Promise<{ transfers: TransferService, req: Parameters<TransferService['transfer']>[0] }> {
  await store.putCustomer('A', {})
  await store.putCustomer('B', {})
  await store.credit('A', 1000, 'seed')
  const answers = [LOST, DUPLICATE]
  let n = 0
  const prepaid = { sendTransfer: async () => (answers[n++] ?? DUPLICATE)(), readTransfer: async () => { throw new Error('not reached') } } as unknown as PrepaidAdapter
  const transfers = new TransferService(store, prepaid, Date.now, 60_000, lifecycleFailedHook(settlement, log))
  return { transfers, req: { clientTxnId: 'T1', fromUrn: 'A', toUrn: 'B', fromAccountNumber: 'a', toAccountNumber: 'b', amount: 400 } }
}

/** that transfer called twice: FAILED, 400 held */
async function failedTransfer (t: Test, store: Store): Promise<{ transfers: TransferService, req: Parameters<TransferService['transfer']>[0] }> {
  const { transfers, req } = await lostThenDuplicate(store, settlementFor(store))
  t.match(await transfers.transfer(req), { status: 'FAILED', retryable: true, held: true })
  t.match(await transfers.transfer(req), { status: 'FAILED', retryable: false, held: true, reconcile: String })
  return { transfers, req }
}

async function line (store: Store, s: SettlementStore, p: Posting, statementId = 'S1'): ReturnType<SettlementStore['applyPosting']> {
  return await s.applyPosting(p, statementId, await lifecycleVerdict(store, p))
}

async function available (store: Store, urn: string): Promise<number | undefined> {
  return (await store.getCustomer(urn))?.available
}

function suite (name: string, make: Make): void {
  t.test(`${name}: a FAILED transfer opens one lifecycle_failed exception; its out line settles it, nothing moved twice`, async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    const { transfers, req } = await failedTransfer(t, store)
    const open = await s.listExceptions({ kind: 'lifecycle_failed', limit: 10 })
    t.equal(open.items.length, 1, 'queued for an operator')
    const x = open.items[0]
    t.match(x, { status: 'open', urn: 'A', reference: 'T1', postingType: 'transfer_out', amount: '400', accept: { action: 'none', amount: '0' }, detail: /FAILED.*400 held here/ })
    t.match(await transfers.transfer(req), { status: 'FAILED', replayed: true })
    t.equal((await s.listExceptions({ kind: 'lifecycle_failed', limit: 10 })).items.length, 1, 'a repeat of the call opens no second one')

    const out = await line(store, s, posting('A', 'transfer_out', 'T1', 400))
    t.equal(out.outcome, 'lifecycle_matched', 'the platform moved it: the hold is the debit')
    t.same(out.exceptions, [])
    t.equal(await available(store, 'A'), 600, 'nothing more taken from the sender')
    const settled = await s.getException(x?.id ?? '')
    t.match(settled, { status: 'resolved', resolution: { action: 'accept', amount: '0', reason: /settled by statement S1/ } })
    t.equal((await s.listExceptions({ kind: 'lifecycle_failed', status: 'open', limit: 10 })).items.length, 0, 'off the open queue')
    await t.rejects(resolveException(store, s, x?.id ?? '', { action: 'release', reason: 'late' }, 'k1'), { code: 'EXTAUTH_ERR_ALREADY_RESOLVED' }, 'the hold is not given back after the line settled it')

    // the receiver's line: credited on accept, as any lifecycle line without a done record
    const inn = await line(store, s, posting('B', 'transfer_in', 'T1', 400))
    t.equal(inn.outcome, 'lifecycle_mismatch')
    await resolveException(store, s, inn.exceptions[0] as string, { action: 'accept', reason: 'the platform moved it' }, 'k1')
    t.equal(await available(store, 'B'), 400)
  })

  t.test(`${name}: release gives back what the FAILED record holds, once; the platform's later line is then a difference to debit`, async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    await failedTransfer(t, store)
    const id = (await s.listExceptions({ kind: 'lifecycle_failed', limit: 10 })).items[0]?.id ?? ''
    await t.rejects(resolveException(store, s, id, { action: 'release', amount: 401, reason: 'too much' }, 'k1'), { code: 'EXTAUTH_ERR_VALIDATION' })
    const r = await resolveException(store, s, id, { action: 'release', reason: 'the platform did not move it' }, 'k1')
    t.match(r.exception, { status: 'resolved', resolution: { action: 'release', amount: '400' } })
    t.equal(await available(store, 'A'), 1000, 'given back')
    t.equal((await resolveException(store, s, id, { action: 'release', reason: 'again' }, 'k1')).replayed, true)
    t.equal(await available(store, 'A'), 1000, 'once')
    const out = await line(store, s, posting('A', 'transfer_out', 'T1', 400))
    t.equal(out.outcome, 'lifecycle_mismatch', 'the platform did move it after all')
    t.match(await s.getException(out.exceptions[0] as string), { accept: { action: 'debit', amount: '400' } })
    t.equal(await available(store, 'A'), 1000, 'nothing moved until an operator accepts')
  })

  t.test(`${name}: a line for less than the hold: the hold is the debit, the rest is a difference to credit`, async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    await failedTransfer(t, store)
    const out = await line(store, s, posting('A', 'transfer_out', 'T1', 300))
    t.equal(out.outcome, 'lifecycle_mismatch')
    t.match(await s.getException(out.exceptions[0] as string), { kind: 'lifecycle_mismatch', accept: { action: 'credit', amount: '100' } })
    const lf = (await s.listExceptions({ kind: 'lifecycle_failed', limit: 10 })).items[0]
    t.match(lf, { status: 'resolved', resolution: { reason: new RegExp(`the difference is exception ${out.exceptions[0] ?? ''}`) } })
  })

  t.test(`${name}: a call whose exception could not be opened fails; its repeat opens it and is told FAILED`, async (t) => {
    const store = await make(t)
    const real = settlementFor(store)
    let refuse = true
    const flaky = new Proxy(real, {
      get (target, prop, receiver) {
        if (prop === 'openException' && refuse) return async () => { throw new Error('store gone') }
        const v = Reflect.get(target, prop, receiver) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      }
    })
    const { transfers, req } = await lostThenDuplicate(store, flaky)
    t.match(await transfers.transfer(req), { status: 'FAILED', retryable: true, held: true })
    await t.rejects(transfers.transfer(req), /store gone/, 'not queued: the call fails, it does not tell the client FAILED')
    t.equal((await real.listExceptions({ kind: 'lifecycle_failed', limit: 10 })).items.length, 0)
    t.match(await transfers.get('T1'), { status: 'FAILED', held: true }, 'the record is saved FAILED')
    refuse = false
    t.match(await transfers.transfer(req), { status: 'FAILED', retryable: false, reconcile: String, replayed: true }, 'the repeat is told')
    t.equal((await real.listExceptions({ kind: 'lifecycle_failed', limit: 10 })).items.length, 1, 'once the repeat opened it')
    t.equal(await available(store, 'A'), 600, 'held once')
  })

  t.test(`${name}: a FAILED load holds nothing: release is refused; its line is a credit to accept, and closes it`, async (t) => {
    const store = await make(t)
    const s = settlementFor(store)
    await store.putCustomer('L', {})
    const rec = { merchantReferenceNo: 'LD1', urn: 'L', amount: '500', status: 'FAILED', reconcile: 'check the charge', createdAtMs: 1 }
    await store.putLifecycle('load', 'LD1', rec, 0, false)
    const opened = await openLifecycleFailed(s, 'load', 'LD1', rec)
    t.match(opened, { opened: true })
    t.match(await openLifecycleFailed(s, 'load', 'LD1', rec), { id: opened?.id, opened: false }, 'once')
    const id = opened?.id ?? ''
    t.match(await s.getException(id), { amount: '0', postingType: 'load', detail: /nothing held here/ })
    await t.rejects(resolveException(store, s, id, { action: 'release', reason: 'x' }, 'k1'), { code: 'EXTAUTH_ERR_VALIDATION' })
    const ld = await line(store, s, posting('L', 'load', 'LD1', 500))
    t.equal(ld.outcome, 'lifecycle_mismatch')
    t.match(await s.getException(ld.exceptions[0] as string), { accept: { action: 'credit', amount: '500' }, detail: /FAILED/ })
    t.match(await s.getException(id), { status: 'resolved' })
    t.equal(await available(store, 'L'), 0)
  })
}

suite('memory', async () => new MemoryStore())
suite('redis', async (t) => await sharedRedisStore(t))
