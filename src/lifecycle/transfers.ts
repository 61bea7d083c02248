// Wallet-to-wallet transfers through the prepaid platform (Encrypt → fundTransfer → Decrypt), mirrored in
// the store once the platform answers 00: the amount leaves `fromUrn` and reaches `toUrn` exactly once,
// each leg an idempotent store operation on the transfer's clientTxnId.
import type { PrepaidAdapter, PrepaidDeclined } from '../adapters/prepaid.js'
import type { Store } from '../store/types.js'
import { StoreRejection } from '../errors.js'
import { failedAnswer, LifecycleConflict, LifecycleNotFound, withLock, type LifecycleAnswer, type LifecycleStatus, type Upstream } from './outcome.js'

export interface TransferRequest {
  clientTxnId: string
  fromUrn: string
  toUrn: string
  fromAccountNumber: string
  toAccountNumber: string
  amount: number
  extra?: Record<string, unknown>
}

export interface TransferRecord {
  clientTxnId: string
  fromUrn: string
  toUrn: string
  amount: string
  /**
   * PENDING: the platform may have the request but its answer was lost; UPSTREAM_OK is kept as AUTHORIZED:
   * the platform said 00 and the store is not yet in step; TRANSFERRED: both legs applied.
   */
  status: LifecycleStatus
  upstream: Upstream | null
  ledgerTransactionId: string | null
  /** set when the platform moved the money but the store could not debit the sender (see README) */
  reconcile?: string
  createdAtMs: number
  updatedAtMs: number
}

export interface TransferAnswer extends LifecycleAnswer {
  clientTxnId: string
  fromUrn: string
  toUrn: string
  amount: string
  ledgerTransactionId?: string | null
  reconcile?: string
  /** why extauth itself declined, before asking the platform */
  reason?: 'INSUFFICIENT_FUNDS'
}

const DEBIT_PREFIX = 'transfer:'

export class TransferService {
  constructor (private readonly store: Store, private readonly prepaid: PrepaidAdapter, private readonly clock: () => number = Date.now) {}

  private answer (r: TransferRecord, extra: Partial<TransferAnswer> = {}): TransferAnswer {
    return {
      clientTxnId: r.clientTxnId, fromUrn: r.fromUrn, toUrn: r.toUrn, amount: r.amount, status: r.status, upstream: r.upstream,
      ledgerTransactionId: r.ledgerTransactionId, ...(r.reconcile !== undefined ? { reconcile: r.reconcile } : {}), ...extra
    }
  }

  private async save (r: TransferRecord, patch: Partial<TransferRecord>): Promise<TransferRecord> {
    const next = { ...r, ...patch, updatedAtMs: this.clock() }
    await this.store.putLifecycle('transfer', r.clientTxnId, next)
    return next
  }

  async get (id: string): Promise<TransferAnswer> {
    const r = await this.store.getLifecycle<TransferRecord>('transfer', id)
    if (r === null) throw new LifecycleNotFound('TRANSFER_NOT_FOUND', `no transfer ${id}`)
    return this.answer(r)
  }

  async transfer (req: TransferRequest): Promise<TransferAnswer> {
    const id = req.clientTxnId
    return await withLock(this.store, 'transfer', id, async () => {
      let r = await this.store.getLifecycle<TransferRecord>('transfer', id)
      if (r !== null && (r.fromUrn !== req.fromUrn || r.toUrn !== req.toUrn || r.amount !== String(req.amount))) {
        throw new LifecycleConflict('REFERENCE_CONFLICT', `transfer ${id} exists with other parties or amount`)
      }
      if (r !== null && (r.status === 'TRANSFERRED' || r.status === 'DECLINED')) return this.answer(r, { replayed: true })

      if (r === null || r.status === 'PENDING') {
        if (r === null) {
          const [from, to] = await Promise.all([this.store.getCustomer(req.fromUrn), this.store.getCustomer(req.toUrn)])
          if (from === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.fromUrn}`)
          if (to === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.toUrn}`)
          if (from.available < req.amount) {
            // refused before the platform moves anything the store could not mirror
            return { clientTxnId: id, fromUrn: req.fromUrn, toUrn: req.toUrn, amount: String(req.amount), status: 'DECLINED', upstream: null, reason: 'INSUFFICIENT_FUNDS' }
          }
        }
        const res = await this.prepaid.transfer({
          clientTxnId: id,
          amount: req.amount,
          from: { urn: req.fromUrn, accountNumber: req.fromAccountNumber },
          to: { urn: req.toUrn, accountNumber: req.toAccountNumber },
          ...(req.extra !== undefined ? { extra: req.extra } : {})
        })
        const now = this.clock()
        const base: TransferRecord = r ?? {
          clientTxnId: id, fromUrn: req.fromUrn, toUrn: req.toUrn, amount: String(req.amount), status: 'PENDING',
          upstream: null, ledgerTransactionId: null, createdAtMs: now, updatedAtMs: now
        }
        if (res.kind === 'failed') {
          // sent: the platform may have moved the money; remember it so a retry resolves it
          if (res.sent && r === null) await this.store.putLifecycle('transfer', id, base)
          return this.answer(base, failedAnswer(res))
        }
        if (res.kind === 'declined') {
          if (r !== null && (res as PrepaidDeclined).family === 'duplicate') {
            // the platform had our earlier request, whose answer we lost: its outcome needs a person
            return this.answer(await this.save(base, { status: 'FAILED', upstream: { code: res.code, description: res.description }, reconcile: 'the platform reports this clientTxnId as already used; check its outcome there' }), { retryable: false })
          }
          const declined = await this.save(base, { status: 'DECLINED', upstream: { code: res.code, description: res.description } })
          return this.answer(declined)
        }
        r = await this.save(base, { status: 'AUTHORIZED', upstream: { code: '00', description: 'SUCCESS' }, ledgerTransactionId: res.ledgerTransactionId })
      }

      // AUTHORIZED: the platform moved the money; bring the store in step, each leg once
      try {
        await this.store.debit(r.fromUrn, Number(r.amount), DEBIT_PREFIX + id)
      } catch (err) {
        if (!(err instanceof StoreRejection)) throw err
        r = await this.save(r, { reconcile: `the platform moved the money but the store refused the debit of ${r.fromUrn}: ${err.code}` })
      }
      await this.store.credit(r.toUrn, Number(r.amount), DEBIT_PREFIX + id)
      r = await this.save(r, { status: 'TRANSFERRED' })
      return this.answer(r)
    })
  }
}
