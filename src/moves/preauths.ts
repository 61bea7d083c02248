// Pre-auth capture and cancellation through the gateway. No balance changes here: the hold was taken by the
// authorization decision; the outcome is recorded per (pgTransactionId, action) so a repeat is a replay.
// The call is recorded (PENDING) before the gateway is asked, so a repeat after a lost answer knows it
// asked and asks again: the gateway answers a repeat of a call it approved with 96 PREVIOUSLY AUTHORIZED.
import { type GatewayAdapter, uncertainDecline } from '../adapters/index.js'
import type { Store } from '../store/types.js'
import { failedAnswer, type LifecycleAnswer, type Upstream } from './answer.js'
import { LifecycleConflict } from './errors.js'
import { LIFECYCLE_LOCK_TTL_MS_DEFAULT, RecordBook, type Revised } from './records.js'

export type PreAuthAction = 'capture' | 'cancel'

interface PreAuthRecord extends Revised {
  pgTransactionId: string
  action: PreAuthAction
  merchantReferenceNo: string
  amount: string | null
  /** PENDING: asked (or about to be), no certain answer yet */
  status: 'PENDING' | 'CAPTURED' | 'CANCELLED' | 'DECLINED'
  upstream: Upstream | null
  atMs: number
}

export interface PreAuthAnswer extends LifecycleAnswer {
  pgTransactionId: string
  action: PreAuthAction
  merchantReferenceNo: string
}

export class PreAuthService {
  private readonly records: RecordBook<PreAuthRecord>

  constructor (store: Store, private readonly gateway: GatewayAdapter, private readonly clock: () => number = Date.now,
    lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT
  ) {
    this.records = new RecordBook<PreAuthRecord>(store, 'preauth', lockTtlMs)
  }

  async run (action: PreAuthAction, pgTransactionId: string, merchantReferenceNo: string, amount: number | null): Promise<PreAuthAnswer> {
    const id = `${pgTransactionId}:${action}`
    return await this.records.locked(id, async (renew) => {
      let r = await this.records.find(id)
      const base = { pgTransactionId, action, merchantReferenceNo }
      if (r !== null) {
        if (r.merchantReferenceNo !== merchantReferenceNo || r.amount !== (amount === null ? null : String(amount))) {
          throw new LifecycleConflict('REFERENCE_CONFLICT', `${action} of ${pgTransactionId} was already asked with other values`)
        }
        if (r.status !== 'PENDING') return { ...base, status: r.status, upstream: r.upstream, replayed: true }
      } else {
        r = await this.records.save(id, null, {
          ...base, amount: amount === null ? null : String(amount), status: 'PENDING', upstream: null, atMs: this.clock()
        })
      }
      const input = { merchantReferenceNo, pgTransactionId, ...(amount !== null ? { amount } : {}) }
      await renew()
      const res = action === 'capture' ? await this.gateway.preAuthCompletion(input) : await this.gateway.preAuthCancellation(input)
      if (res.kind === 'failed') return { ...base, ...failedAnswer(res) }
      const done = action === 'capture' ? 'CAPTURED' : 'CANCELLED'
      let status: PreAuthRecord['status'] = done
      if (res.kind === 'declined') {
        // 96 PREVIOUSLY AUTHORIZED: an earlier ask went through and its answer was lost
        if (res.previously === 'authorized') status = done
        else {
          const unsure = res.previously === 'declined' ? null : uncertainDecline(res)
          if (unsure !== null) return { ...base, ...failedAnswer(unsure) }
          status = 'DECLINED'
        }
      }
      const upstream = res.kind === 'ok' ? { code: '00', description: `status ${res.status ?? '50020'}` } : { code: res.code, description: res.description }
      r = await this.records.save(id, r, { ...r, status, upstream, atMs: this.clock() })
      return { ...base, status: r.status as PreAuthAnswer['status'], upstream: r.upstream }
    })
  }
}
