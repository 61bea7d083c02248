// What every card-lifecycle call answers: a status word, the upstream's code and description, and for a
// failure whether the same call may be repeated (README "Card lifecycle API").
import { randomUUID } from 'node:crypto'
import type { Failed } from '../adapters/result.js'
import { DECISION_RETENTION_MS_MIN, type LifecycleKind, type Store } from '../store/types.js'
import { LIFECYCLE_LOCK_TTL_MS_DEFAULT } from '../adapters/config.js'
import { ExtauthError } from '../errors.js'

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

export class LifecycleConflict extends ExtauthError<'REFERENCE_CONFLICT' | 'IN_PROGRESS' | 'WRONG_STATE'> {
  override readonly name = 'LifecycleConflict'
}

/** Not found, or (NOT_CONFIGURED) the party behind the call is not configured. */
export class LifecycleNotFound extends ExtauthError<'LOAD_NOT_FOUND' | 'TRANSFER_NOT_FOUND' | 'UNLOAD_NOT_FOUND' | 'CUSTOMER_NOT_FOUND' | 'NOT_CONFIGURED'> {
  override readonly name = 'LifecycleNotFound'
}

/**
 * How long a lifecycle lock lasts when its holder never lets go (a crashed process). It must outlive the
 * upstream calls made under it: LIFECYCLE_LOCK_TTL_MS, checked at start-up against the adapters' limits.
 */
export { LIFECYCLE_LOCK_TTL_MS_DEFAULT } from '../adapters/config.js'

/**
 * Upstream calls of one reference never overlap: a second caller is told to retry. The lock carries a
 * random owner token and is released only by its owner, so a holder that outlived its lock cannot release
 * the lock a later caller took since.
 */
export async function withLock<T> (
  store: Store, kind: LifecycleKind, id: string, fn: () => Promise<T>, ttlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT
): Promise<T> {
  const owner = randomUUID()
  if (!await store.lockLifecycle(kind, id, ttlMs, owner)) {
    throw new LifecycleConflict('IN_PROGRESS', `another call for ${kind} ${id} is in progress; retry`)
  }
  try {
    return await fn()
  } finally {
    // a lock that cannot be released now expires on its own; the call's own outcome is what the caller needs
    await store.unlockLifecycle(kind, id, owner).catch(() => false)
  }
}
