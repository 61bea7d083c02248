// What every card-lifecycle call answers: a status word, the upstream's code and description, and for a
// failure whether the same call may be repeated (README "Card lifecycle API").
import type { Failed } from '../adapters/index.js'
import { DECISION_RETENTION_MS_MIN } from '../store/types.js'

export type LifecycleStatus =
  | 'OTP_SENT' | 'OTP_VERIFIED' | 'AUTHORIZED' | 'LOADED' | 'OTP_INVALID' | 'OTP_EXPIRED' | 'OTP_EXHAUSTED'
  | 'PENDING' | 'TRANSFERRED' | 'UNLOADED' | 'CAPTURED' | 'CANCELLED' | 'ASSESSED' | 'DECLINED' | 'FAILED'

export interface Upstream {
  code: string
  description: string
}

export interface LifecycleAnswer {
  status: LifecycleStatus
  upstream: Upstream | null
  retryable?: boolean
  /** the earlier outcome of this reference was returned; nothing was called or changed */
  replayed?: boolean
}

/**
 * How long the store surely remembers the reference of a credit or debit (DECISION_RETENTION_DAYS is never
 * less). A money operation that a record names but never confirmed is completed by a repeat only within
 * it: later, the store may have forgotten it was made and would make it again.
 */
export const MONEY_REFERENCE_HORIZON_MS = DECISION_RETENTION_MS_MIN

export const STALE_RECONCILE = 'a store operation of this call was left unconfirmed longer than the store keeps its reference ' +
  '(DECISION_RETENTION_DAYS): check the customer\'s balance for it and settle by hand'

/** An upstream failure: nothing it did is assumed, the store is unchanged, the caller may repeat the call. */
export function failedAnswer (f: Failed): LifecycleAnswer & { failure: string } {
  return { status: 'FAILED', upstream: null, retryable: f.retryable, failure: f.reason }
}
