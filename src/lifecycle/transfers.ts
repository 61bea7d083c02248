// Wallet-to-wallet transfers through the prepaid platform (Encrypt → fundTransfer → Decrypt), mirrored in
// the store. The sender's amount is held (debited) before the platform is asked, so it cannot be spent
// while the platform moves it; a definite decline gives it back, a 00 credits the receiver, once.
import type { PrepaidAdapter } from '../adapters/prepaid.js'
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
   * PENDING: not settled with the platform yet (a retry asks it again); AUTHORIZED: the platform said 00
   * and the receiver is not credited yet; TRANSFERRED, DECLINED: done; FAILED: the platform's outcome
   * cannot be known here (see `reconcile`).
   */
  status: LifecycleStatus
  upstream: Upstream | null
  ledgerTransactionId: string | null
  /** the sender's amount is held for this transfer */
  held: boolean
  /** numbers the holds, so a hold given back and taken again is a new idempotent debit */
  holdSeq: number
  reconcile?: string
  reason?: 'INSUFFICIENT_FUNDS'
  createdAtMs: number
  updatedAtMs: number
}

export interface TransferAnswer extends LifecycleAnswer {
  clientTxnId: string
  fromUrn: string
  toUrn: string
  amount: string
  ledgerTransactionId?: string | null
  /** the sender's amount stays held until a repeat of the call settles the transfer */
  held?: boolean
  reconcile?: string
  /** why extauth itself declined, before asking the platform */
  reason?: 'INSUFFICIENT_FUNDS'
}

const FINAL: ReadonlySet<LifecycleStatus> = new Set(['TRANSFERRED', 'DECLINED', 'FAILED'])

export class TransferService {
  constructor (private readonly store: Store, private readonly prepaid: PrepaidAdapter, private readonly clock: () => number = Date.now) {}

  private answer (r: TransferRecord, extra: Partial<TransferAnswer> = {}): TransferAnswer {
    return {
      clientTxnId: r.clientTxnId, fromUrn: r.fromUrn, toUrn: r.toUrn, amount: r.amount, status: r.status, upstream: r.upstream,
      ledgerTransactionId: r.ledgerTransactionId,
      ...(r.held ? { held: true } : {}),
      ...(r.reconcile !== undefined ? { reconcile: r.reconcile } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...extra
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

  private async release (r: TransferRecord): Promise<void> {
    await this.store.credit(r.fromUrn, Number(r.amount), `transfer-release:${r.clientTxnId}:${r.holdSeq}`)
  }

  async transfer (req: TransferRequest): Promise<TransferAnswer> {
    const id = req.clientTxnId
    return await withLock(this.store, 'transfer', id, async () => {
      let r = await this.store.getLifecycle<TransferRecord>('transfer', id)
      if (r !== null && (r.fromUrn !== req.fromUrn || r.toUrn !== req.toUrn || r.amount !== String(req.amount))) {
        throw new LifecycleConflict('REFERENCE_CONFLICT', `transfer ${id} exists with other parties or amount`)
      }
      if (r !== null && FINAL.has(r.status)) return this.answer(r, { replayed: true })
      if (r === null) {
        const [from, to] = await Promise.all([this.store.getCustomer(req.fromUrn), this.store.getCustomer(req.toUrn)])
        if (from === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.fromUrn}`)
        if (to === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.toUrn}`)
        const now = this.clock()
        // recorded before the platform is first asked: a repeat after a lost answer then knows it asked
        r = {
          clientTxnId: id, fromUrn: req.fromUrn, toUrn: req.toUrn, amount: String(req.amount), status: 'PENDING',
          upstream: null, ledgerTransactionId: null, held: false, holdSeq: 0, createdAtMs: now, updatedAtMs: now
        }
        await this.store.putLifecycle('transfer', id, r)
      }

      if (r.status === 'PENDING') {
        if (!r.held) {
          const holdSeq = r.holdSeq + 1
          try {
            await this.store.debit(r.fromUrn, Number(r.amount), `transfer:${id}:${holdSeq}`)
          } catch (err) {
            if (err instanceof StoreRejection && err.code === 'INSUFFICIENT_FUNDS') {
              return this.answer(await this.save(r, { status: 'DECLINED', reason: 'INSUFFICIENT_FUNDS' }))
            }
            throw err
          }
          r = await this.save(r, { held: true, holdSeq })
        }
        const res = await this.prepaid.transfer({
          clientTxnId: id,
          amount: req.amount,
          from: { urn: req.fromUrn, accountNumber: req.fromAccountNumber },
          to: { urn: req.toUrn, accountNumber: req.toAccountNumber },
          ...(req.extra !== undefined ? { extra: req.extra } : {})
        })
        if (res.kind === 'failed') {
          // never reached the platform: give the hold back; may have: keep it until a repeat settles it
          if (!res.sent) {
            await this.release(r)
            r = await this.save(r, { held: false })
          }
          return this.answer(r, failedAnswer(res))
        }
        if (res.kind === 'declined') {
          const upstream = { code: res.code, description: res.description }
          if (res.family === 'duplicate') {
            // the platform has had this clientTxnId, and its answer was lost: the money may have moved
            return this.answer(await this.save(r, {
              status: 'FAILED', upstream, reconcile: 'the platform reports this clientTxnId as already used; check its outcome there, then release or complete the held amount'
            }), { retryable: false })
          }
          await this.release(r)
          return this.answer(await this.save(r, { status: 'DECLINED', upstream, held: false }))
        }
        r = await this.save(r, { status: 'AUTHORIZED', upstream: { code: '00', description: 'SUCCESS' }, ledgerTransactionId: res.ledgerTransactionId })
      }

      // AUTHORIZED: the sender's amount was taken by the hold; the receiver is credited once
      await this.store.credit(r.toUrn, Number(r.amount), `transfer:${id}`)
      return this.answer(await this.save(r, { status: 'TRANSFERRED', held: false }))
    })
  }
}
