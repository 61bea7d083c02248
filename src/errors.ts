// One catalogue of our operating errors, each with a stable code; tests assert on codes, never on text.
import createError from '@fastify/error'

export const ERR_UNAUTHORIZED = createError('EXTAUTH_ERR_UNAUTHORIZED', 'Missing or wrong credentials', 401)
export const ERR_FORBIDDEN_SOURCE = createError('EXTAUTH_ERR_FORBIDDEN_SOURCE', 'Source address %s is not allowed', 403)
export const ERR_BAD_REQUEST = createError('EXTAUTH_ERR_BAD_REQUEST', '%s', 400)
export const ERR_NOT_FOUND = createError('EXTAUTH_ERR_NOT_FOUND', '%s', 404)
export const ERR_CONFLICT = createError('EXTAUTH_ERR_CONFLICT', '%s', 409)
export const ERR_UNPROCESSABLE = createError('EXTAUTH_ERR_UNPROCESSABLE', '%s', 422)
export const ERR_STORE_UNAVAILABLE = createError('EXTAUTH_ERR_STORE_UNAVAILABLE', 'Store unavailable: %s', 503)
/**
 * The store surely did nothing: the command was never sent (no connection), or the store answered with an
 * error before changing anything. Nothing needs undoing.
 */
export const ERR_STORE_NOT_DONE = createError('EXTAUTH_ERR_STORE_NOT_DONE', 'Store did not run the command: %s', 503)
/** The command may have reached the store and committed; its reply was lost or late. */
export const ERR_STORE_OUTCOME_UNKNOWN = createError('EXTAUTH_ERR_STORE_OUTCOME_UNKNOWN', 'Store outcome unknown: %s', 503)

export function isStoreNotDone (err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === 'EXTAUTH_ERR_STORE_NOT_DONE'
}

/** A store operation refused for a reason the caller can act on (maps to 404 / 409 on the admin API). */
export class StoreRejection extends Error {
  readonly code: StoreRejectionCode
  constructor (code: StoreRejectionCode, message: string) {
    super(message)
    this.name = 'StoreRejection'
    this.code = code
  }
}

export function reject (code: StoreRejectionCode): never {
  throw new StoreRejection(code, code)
}

export type StoreRejectionCode =
  | 'CUSTOMER_NOT_FOUND'
  | 'DECISION_NOT_FOUND'
  | 'REFERENCE_CONFLICT'
  | 'INSUFFICIENT_FUNDS'
  | 'NOT_APPROVED'
  | 'EXCEEDS_HOLD'
  | 'ALREADY_REVERSED'
  | 'BALANCE_LIMIT'
