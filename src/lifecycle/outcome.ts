// What every card-lifecycle call answers: a status word, the upstream's code and description, and for a
// failure whether the same call may be repeated (README "Card lifecycle API").
import type { Failed } from '../adapters/result.js'
import type { LifecycleKind, Store } from '../store/types.js'

export type LifecycleStatus =
  | 'OTP_SENT' | 'OTP_VERIFIED' | 'AUTHORIZED' | 'LOADED' | 'OTP_INVALID' | 'OTP_EXPIRED' | 'OTP_EXHAUSTED'
  | 'PENDING' | 'TRANSFERRED' | 'CAPTURED' | 'CANCELLED' | 'ASSESSED' | 'DECLINED' | 'FAILED'

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

/** An upstream failure: nothing it did is assumed, the store is unchanged, the caller may repeat the call. */
export function failedAnswer (f: Failed): LifecycleAnswer & { failure: string } {
  return { status: 'FAILED', upstream: null, retryable: f.retryable, failure: f.reason }
}

export class LifecycleConflict extends Error {
  constructor (readonly code: 'REFERENCE_CONFLICT' | 'IN_PROGRESS' | 'WRONG_STATE', message: string) {
    super(message)
    this.name = 'LifecycleConflict'
  }
}

export class LifecycleNotFound extends Error {
  constructor (readonly code: 'LOAD_NOT_FOUND' | 'TRANSFER_NOT_FOUND' | 'CUSTOMER_NOT_FOUND' | 'NOT_CONFIGURED', message: string) {
    super(message)
    this.name = 'LifecycleNotFound'
  }
}

/** Upstream calls of one reference never overlap: a second caller is told to retry. */
export async function withLock<T> (store: Store, kind: LifecycleKind, id: string, fn: () => Promise<T>): Promise<T> {
  // longer than any upstream budget, so a crashed holder's lock expires on its own
  if (!await store.lockLifecycle(kind, id, 60_000)) {
    throw new LifecycleConflict('IN_PROGRESS', `another call for ${kind} ${id} is in progress; retry`)
  }
  try {
    return await fn()
  } finally {
    await store.unlockLifecycle(kind, id)
  }
}
