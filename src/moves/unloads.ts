// Wallet unloads through the prepaid platform (Encrypt messageCode 3450 → Unload → Decrypt): money leaves a
// customer's wallet for a bank account or a beneficiary. amount + fee is held first (held-move.ts), so the
// customer cannot spend it meanwhile; a 00 makes the hold the final debit, a definite decline gives it back.
import { checkUnload, type PrepaidAdapter, type UnloadInput } from '../adapters/index.js'
import type { Store } from '../store/types.js'
import { fingerprintOf, HeldMoves, type HeldMoveAnswer, type HeldMoveRecord } from './held-move.js'
import { LifecycleConflict, LifecycleNotFound } from './errors.js'
import { type FailedHook, LIFECYCLE_LOCK_TTL_MS_DEFAULT } from './records.js'

/** The card-lifecycle call: the platform's Unload fields, for a customer of ours (`urn`). */
export type UnloadRequest = Omit<UnloadInput, 'customerId' | 'requestDateTime'> & {
  urn: string
  /** default: the customer's customerId in the store */
  customerId?: string
}

export interface UnloadRecord extends HeldMoveRecord {
  urn: string
  customerId: string
  amount: string
  fee: string
  /** the first attempt's: every attempt sends the same request */
  requestDateTimeMs: number
}

export interface UnloadAnswer extends HeldMoveAnswer {
  urn: string
  amount: string
  fee: string
}

/** The values that make an unload: a repeat must carry the same ones. */
export function unloadFingerprint (req: UnloadRequest): string {
  return fingerprintOf([
    req.urn, req.accountNumber, req.amount, req.fee, req.receiver, req.sourceType, req.fundFlowType, req.implId, req.implType,
    req.beneficiaryId, req.customerId ?? null, req.customerMobile ?? null, req.reservedField1 ?? null, req.extra ?? null
  ])
}

export class UnloadService {
  private readonly moves: HeldMoves<UnloadRecord>

  constructor (
    private readonly store: Store, private readonly prepaid: PrepaidAdapter, private readonly clock: () => number = Date.now,
    lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT,
    /** a record left FAILED with a reconcile note, for the operator's queue */
    onFailed?: FailedHook
  ) {
    this.moves = new HeldMoves<UnloadRecord>(store, 'unload', 'UNLOADED', clock, lockTtlMs, onFailed)
  }

  private answer (r: UnloadRecord, extra: Partial<UnloadAnswer> = {}, failed?: Parameters<HeldMoves<UnloadRecord>['answer']>[1]): UnloadAnswer {
    return { ...this.moves.answer(r, failed), urn: r.urn, amount: r.amount, fee: r.fee, ...extra }
  }

  /** the store reference of an unload's completion (its unload.completed event, written once) */
  static completionReference (id: string): string {
    return `unload:${id}:completed`
  }

  async get (id: string): Promise<UnloadAnswer> {
    return this.answer(await this.moves.get(id))
  }

  /** Throws the adapter's bad-request error, holding and sending nothing, when a field breaks the spec. */
  async unload (req: UnloadRequest): Promise<UnloadAnswer> {
    const id = req.clientTxnId
    const { urn: _u, ...checked } = req
    checkUnload({ ...checked, customerId: req.customerId ?? 'unknown' })
    return await this.moves.locked(id, async (renew) => {
      let r = await this.moves.find(id)
      if (r !== null) this.moves.conflict(r, unloadFingerprint(req), r.urn === req.urn && r.amount === String(req.amount) && r.fee === String(req.fee))
      const replay = r !== null && this.moves.isFinal(r)
      if (r === null) {
        await this.moves.refuseOtherKind(id)
        const customer = await this.store.getCustomer(req.urn)
        if (customer === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.urn}`)
        // a blocked or closed customer spends nothing; a call already under way still settles
        if (customer.status !== 'ACTIVE') throw new LifecycleConflict('WRONG_STATE', `customer ${req.urn} is ${customer.status}`)
        const customerId = req.customerId ?? customer.customerId
        if (customerId === null) {
          throw new LifecycleConflict('WRONG_STATE', `customer ${req.urn} has no customerId recorded: set it, or send customerId`)
        }
        r = await this.moves.create({
          clientTxnId: id, urn: req.urn, customerId, amount: String(req.amount), fee: String(req.fee), requestDateTimeMs: this.clock(), fingerprint: unloadFingerprint(req)
        }, { urn: req.urn, amount: req.amount + req.fee })
      }
      const { urn: _urn, ...fields } = req
      const input: UnloadInput = { ...fields, customerId: r.customerId, requestDateTime: new Date(r.requestDateTimeMs) }
      const out = await this.moves.advance(r, {
        renew,
        send: async () => await this.prepaid.sendUnload(input),
        read: async (token) => await this.prepaid.readUnload(token, id),
        // the hold is the unload's debit: nothing else moves here; the completion is recorded with its event
        complete: async (done) => {
          await this.store.recordCompletion(done.urn, UnloadService.completionReference(id), {
            type: 'unload.completed',
            details: { clientTxnId: id, amount: done.amount, fee: done.fee, ...(done.ledgerTransactionId !== null ? { ledgerTransactionId: done.ledgerTransactionId } : {}) }
          })
        }
      })
      return this.answer(out.r, replay ? { replayed: true } : {}, out.failed)
    })
  }
}
