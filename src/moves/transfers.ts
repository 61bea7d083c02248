// Wallet-to-wallet transfers through the prepaid platform (Encrypt → fundTransfer → Decrypt), mirrored in
// the store. The sender's amount is held before the platform is asked (held-move.ts); a definite decline
// gives it back, a 00 credits the receiver, once.
import type { PrepaidAdapter } from '../adapters/index.js'
import type { Store } from '../store/types.js'
import { fingerprintOf, HeldMoves, type HeldMoveAnswer, type HeldMoveRecord } from './held-move.js'
import { LifecycleConflict, LifecycleNotFound } from './errors.js'
import { type FailedHook, LIFECYCLE_LOCK_TTL_MS_DEFAULT } from './records.js'
import { refuseClosedReceiver } from './receiver.js'

export interface TransferRequest {
  clientTxnId: string
  fromUrn: string
  toUrn: string
  fromAccountNumber: string
  toAccountNumber: string
  amount: number
  extra?: Record<string, unknown>
}

export interface TransferRecord extends HeldMoveRecord {
  fromUrn: string
  toUrn: string
  amount: string
}

export interface TransferAnswer extends HeldMoveAnswer {
  fromUrn: string
  toUrn: string
  amount: string
}

/** The values that make a transfer: a repeat must carry the same ones. */
export function transferFingerprint (req: TransferRequest): string {
  return fingerprintOf([req.fromUrn, req.toUrn, req.amount, req.fromAccountNumber, req.toAccountNumber])
}

export class TransferService {
  private readonly moves: HeldMoves<TransferRecord>

  constructor (
    private readonly store: Store, private readonly prepaid: PrepaidAdapter, private readonly clock: () => number = Date.now,
    lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT,
    /** a record left FAILED with a reconcile note, for the operator's queue */
    onFailed?: FailedHook
  ) {
    this.moves = new HeldMoves<TransferRecord>(store, 'transfer', 'TRANSFERRED', clock, lockTtlMs, onFailed)
  }

  private answer (r: TransferRecord, extra: Partial<TransferAnswer> = {}, failed?: Parameters<HeldMoves<TransferRecord>['answer']>[1]): TransferAnswer {
    return { ...this.moves.answer(r, failed), fromUrn: r.fromUrn, toUrn: r.toUrn, amount: r.amount, ...extra }
  }

  async get (id: string): Promise<TransferAnswer> {
    return this.answer(await this.moves.get(id))
  }

  /** the store reference of the receiver's credit */
  static creditReference (clientTxnId: string): string {
    return `transfer:${clientTxnId}:receive`
  }

  async transfer (req: TransferRequest): Promise<TransferAnswer> {
    const id = req.clientTxnId
    return await this.moves.locked(id, async (renew) => {
      const fingerprint = transferFingerprint(req)
      let r = await this.moves.find(id)
      if (r !== null) this.moves.conflict(r, fingerprint, r.fromUrn === req.fromUrn && r.toUrn === req.toUrn && r.amount === String(req.amount))
      const replay = r !== null && this.moves.isFinal(r)
      if (r === null) {
        await this.moves.refuseOtherKind(id)
        const [from, to] = await Promise.all([this.store.getCustomer(req.fromUrn), this.store.getCustomer(req.toUrn)])
        if (from === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.fromUrn}`)
        if (to === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.toUrn}`)
        // a blocked or closed customer spends nothing; a call already under way still settles
        if (from.status !== 'ACTIVE') throw new LifecycleConflict('WRONG_STATE', `customer ${req.fromUrn} is ${from.status}`)
        refuseClosedReceiver(to)
        r = await this.moves.create({ clientTxnId: id, fromUrn: req.fromUrn, toUrn: req.toUrn, amount: String(req.amount), fingerprint }, { urn: req.fromUrn, amount: req.amount })
      }
      const input = {
        clientTxnId: id,
        amount: req.amount,
        from: { urn: req.fromUrn, accountNumber: req.fromAccountNumber },
        to: { urn: req.toUrn, accountNumber: req.toAccountNumber },
        ...(req.extra !== undefined ? { extra: req.extra } : {})
      }
      const out = await this.moves.advance(r, {
        renew,
        send: async () => await this.prepaid.sendTransfer(input),
        read: async (token) => await this.prepaid.readTransfer(token, id),
        complete: async (t) => {
          await this.store.credit(t.toUrn, Number(t.amount), TransferService.creditReference(id), { type: 'transfer.completed', details: { clientTxnId: id, fromUrn: t.fromUrn } })
        }
      })
      return this.answer(out.r, replay ? { replayed: true } : {}, out.failed)
    })
  }
}
