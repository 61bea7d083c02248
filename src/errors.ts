// One catalogue of our operating errors, each with a stable code; tests assert on codes, never on text.
import createError from '@fastify/error'

/**
 * The store surely did nothing: the command was never sent (no connection), or the store answered with an
 * error before changing anything. Nothing needs undoing.
 */
export const ERR_STORE_NOT_DONE = createError('EXTAUTH_ERR_STORE_NOT_DONE', 'Store did not run the command: %s', 503)
/** The command may have reached the store and committed; its reply was lost or late. */
export const ERR_STORE_OUTCOME_UNKNOWN = createError('EXTAUTH_ERR_STORE_OUTCOME_UNKNOWN', 'Store outcome unknown: %s', 503)
/**
 * The write happened on the primary, but not enough replicas confirmed it (REDIS_WAIT_REPLICAS): a failover
 * could lose it. Not "not done": whoever acted on it undoes it.
 */
export const ERR_STORE_NOT_REPLICATED = createError('EXTAUTH_ERR_STORE_NOT_REPLICATED', 'Store write not replicated: %s', 503)

export function isStoreNotReplicated (err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === 'EXTAUTH_ERR_STORE_NOT_REPLICATED'
}

export function isStoreNotDone (err: unknown): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === 'EXTAUTH_ERR_STORE_NOT_DONE'
}

/**
 * Every error an answer of the admin listener can carry, by its `error` word, with its HTTP status. The
 * words are user-facing (clients branch on them): test/errors.test.ts pins this table.
 */
export const API_ERRORS = {
  VALIDATION: 400,
  BAD_REQUEST: 400,
  SAME_CUSTOMER: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CUSTOMER_NOT_FOUND: 404,
  CARD_NOT_FOUND: 404,
  DECISION_NOT_FOUND: 404,
  LOAD_NOT_FOUND: 404,
  TRANSFER_NOT_FOUND: 404,
  UNLOAD_NOT_FOUND: 404,
  REFERENCE_CONFLICT: 409,
  INSUFFICIENT_FUNDS: 409,
  NOT_APPROVED: 409,
  EXCEEDS_HOLD: 409,
  ALREADY_REVERSED: 409,
  BALANCE_LIMIT: 409,
  IN_PROGRESS: 409,
  WRONG_STATE: 409,
  EXCEPTION_NOT_FOUND: 404,
  STATEMENT_NOT_FOUND: 404,
  ALREADY_RESOLVED: 409,
  RULES_INVALID: 422,
  STATEMENT_INVALID: 422,
  NOT_CONFIGURED: 503,
  UNAVAILABLE: 503
} as const

export type ApiErrorWord = keyof typeof API_ERRORS

/** An error with a place in the catalogue: `code` is `EXTAUTH_ERR_<word>`, `statusCode` its HTTP status. */
export class ExtauthError<W extends ApiErrorWord = ApiErrorWord> extends Error {
  readonly code: `EXTAUTH_ERR_${W}`
  readonly statusCode: number
  /** `fields`: more of the answer beside `error` and `message` (the field a validation names) */
  constructor (readonly word: W, message: string, readonly fields?: Record<string, string>) {
    super(message)
    this.name = 'ExtauthError'
    this.code = `EXTAUTH_ERR_${word}`
    this.statusCode = API_ERRORS[word]
  }
}

export function apiError (word: ApiErrorWord, message: string, fields?: Record<string, string>): ExtauthError {
  return new ExtauthError(word, message, fields)
}

export function errorBody (word: ApiErrorWord, message: string): { error: ApiErrorWord, message: string } {
  return { error: word, message }
}

/** The one mapping from an error to the admin listener's answer; null for an error that is not ours. */
export function apiAnswerOf (err: unknown): { status: number, body: { error: ApiErrorWord, message: string } } | null {
  if (!(err instanceof ExtauthError)) return null
  const e = err as ExtauthError // instanceof narrows to ExtauthError<any>; its word is one of ours
  return { status: e.statusCode, body: { ...errorBody(e.word, e.message), ...e.fields } }
}

export type StoreRejectionCode =
  | 'CUSTOMER_NOT_FOUND'
  | 'CARD_NOT_FOUND'
  | 'DECISION_NOT_FOUND'
  | 'REFERENCE_CONFLICT'
  | 'INSUFFICIENT_FUNDS'
  | 'NOT_APPROVED'
  | 'EXCEEDS_HOLD'
  | 'ALREADY_REVERSED'
  | 'BALANCE_LIMIT'

/** A store operation refused for a reason the caller can act on. */
export class StoreRejection extends ExtauthError<StoreRejectionCode> {
  constructor (word: StoreRejectionCode, message: string) {
    super(word, message)
    this.name = 'StoreRejection'
  }
}

export function reject (code: StoreRejectionCode): never {
  throw new StoreRejection(code, code)
}

/**
 * A lifecycle record changed since the caller read it (its revision moved on): a newer call of the same
 * reference has taken over, and the older call stops. Answered as IN_PROGRESS: a repeat reads the newer record.
 */
export class LifecycleStale extends ExtauthError<'IN_PROGRESS'> {
  constructor (message: string) {
    super('IN_PROGRESS', message)
    this.name = 'LifecycleStale'
  }
}
