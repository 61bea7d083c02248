// The one shape every adapter call answers with, so callers switch on `kind` and never catch.
// A party that answered with a business code is `declined`; a party we could not hear properly is `failed`.

/**
 * `uncertain`: the party answered a code that does not say whether it acted (a system error, a code
 * outside its table, or any code carried by a non-2xx status): see uncertainDecline().
 */
export type FailureReason = 'timeout' | 'transport' | 'malformed' | 'http_status' | 'uncertain'

export interface Failed {
  kind: 'failed'
  reason: FailureReason
  /** whether the caller may try the same operation again (with the same reference, so the party can dedupe) */
  retryable: boolean
  /**
   * false only when the request is known never to have reached the party (connect refused, budget spent
   * before sending). When true the party may have acted on it: reconcile before assuming nothing happened.
   */
  sent: boolean
  /** HTTP attempts made; more than one only after connect failures */
  attempts: number
  httpStatus?: number
  /** short and secret-free (an error code or a schema path, never a body) */
  detail: string
}

export interface DeclinedBase<F extends string> {
  kind: 'declined'
  /** the party's code as a string, e.g. '51', '450', '6919' */
  code: string
  description: string
  /** the code's family, stable across parties' wording */
  family: F
  /** whether trying again later may succeed (system errors at the party) */
  retryable: boolean
  httpStatus?: number
}

export type Ok<T> = { kind: 'ok' } & T

export function failed (
  reason: FailureReason,
  fields: { retryable: boolean, sent: boolean, attempts: number, detail: string, httpStatus?: number }
): Failed {
  return { kind: 'failed', reason, ...fields }
}

/** What a party's answer parses to when it answered at all. */
export type Answer = { kind: 'ok' } | DeclinedBase<string>

/**
 * A decline that does not prove the party refused: a system error or a code outside the party's table
 * may come after the party acted (a timeout between its parts, a late issuer approval), and any code on a
 * non-2xx status may be a proxy's or a half-finished call's. A money call reads it as "sent, outcome
 * unknown": keep what is held and let a repeat with the same reference ask again. null when the decline
 * is a certain refusal.
 */
export function uncertainDecline (d: DeclinedBase<string>): Failed | null {
  const non2xx = d.httpStatus !== undefined && (d.httpStatus < 200 || d.httpStatus >= 300)
  if (!d.retryable && d.family !== 'system' && d.family !== 'unknown' && !non2xx) return null
  return failed('uncertain', {
    retryable: true,
    sent: true,
    attempts: 1,
    detail: `code ${d.code}${non2xx ? ` on HTTP ${String(d.httpStatus)}` : ''}`,
    ...(d.httpStatus !== undefined ? { httpStatus: d.httpStatus } : {})
  })
}
