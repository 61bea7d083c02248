// Pre-auth capture and cancellation through the gateway. No balance changes here: the hold was taken by the
// authorization decision; the outcome is recorded per (pgTransactionId, action) so a repeat is a replay.
import type { GatewayAdapter } from '../adapters/gateway.js'
import type { Store } from '../store/types.js'
import { failedAnswer, LIFECYCLE_LOCK_TTL_MS_DEFAULT, LifecycleConflict, withLock, type LifecycleAnswer, type Upstream } from './outcome.js'

export type PreAuthAction = 'capture' | 'cancel'

interface PreAuthRecord {
  pgTransactionId: string
  action: PreAuthAction
  merchantReferenceNo: string
  amount: string | null
  status: 'CAPTURED' | 'CANCELLED' | 'DECLINED'
  upstream: Upstream
  atMs: number
}

export interface PreAuthAnswer extends LifecycleAnswer {
  pgTransactionId: string
  action: PreAuthAction
  merchantReferenceNo: string
}

export class PreAuthService {
  constructor (private readonly store: Store, private readonly gateway: GatewayAdapter, private readonly clock: () => number = Date.now,
    private readonly lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT
  ) {}

  async run (action: PreAuthAction, pgTransactionId: string, merchantReferenceNo: string, amount: number | null): Promise<PreAuthAnswer> {
    const id = `${pgTransactionId}:${action}`
    return await withLock(this.store, 'preauth', id, async () => {
      const prior = await this.store.getLifecycle<PreAuthRecord>('preauth', id)
      const base = { pgTransactionId, action, merchantReferenceNo }
      if (prior !== null) {
        if (prior.merchantReferenceNo !== merchantReferenceNo || prior.amount !== (amount === null ? null : String(amount))) {
          throw new LifecycleConflict('REFERENCE_CONFLICT', `${action} of ${pgTransactionId} was already asked with other values`)
        }
        return { ...base, status: prior.status, upstream: prior.upstream, replayed: true }
      }
      const input = { merchantReferenceNo, pgTransactionId, ...(amount !== null ? { amount } : {}) }
      const res = action === 'capture' ? await this.gateway.preAuthCompletion(input) : await this.gateway.preAuthCancellation(input)
      if (res.kind === 'failed') return { ...base, ...failedAnswer(res) }
      const record: PreAuthRecord = {
        ...base,
        amount: amount === null ? null : String(amount),
        status: res.kind === 'ok' ? (action === 'capture' ? 'CAPTURED' : 'CANCELLED') : 'DECLINED',
        upstream: res.kind === 'ok' ? { code: '00', description: `status ${res.status ?? '50020'}` } : { code: res.code, description: res.description },
        atMs: this.clock()
      }
      await this.store.putLifecycle('preauth', id, record)
      return { ...base, status: record.status, upstream: record.upstream }
    }, this.lockTtlMs)
  }
}
