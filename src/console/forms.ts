// What a form sends is text: each value is read as a string and converted here, explicitly, with the same
// checks the admin API's schemas make (an amount is digits and at least 1, a status one of the list). A
// value that does not convert is a FormError with words for the person who typed it.
import { amountOf } from '../http/amount.js'

export class FormError extends Error {
  constructor (readonly field: string, message: string) {
    super(message)
    this.name = 'FormError'
  }
}

export type FormBody = Record<string, unknown>

/** the named field as text ('' when absent, or not text: a file, a repeated field) */
export function text (body: unknown, name: string): string {
  if (body === null || typeof body !== 'object') return ''
  const v = (body as FormBody)[name]
  return typeof v === 'string' ? v.trim() : ''
}

/** A run of 12 or more digits (with spaces or dashes) looks like a card number: never into the audit. */
const CARD_NUMBER_LIKE = /(?:\d[ -]?){12,}/

/** Every action's reason: 3 to 300 characters, one line, no card number. */
export function reasonOf (body: unknown): string {
  const r = text(body, 'reason').replace(/\s+/g, ' ')
  if (r.length < 3) throw new FormError('reason', 'Give a reason (at least 3 characters): it is kept in the audit trail.')
  if (r.length > 300) throw new FormError('reason', 'The reason is longer than 300 characters.')
  if (CARD_NUMBER_LIKE.test(r)) throw new FormError('reason', 'The reason looks like it holds a card number; card data is never kept. Leave it out.')
  return r
}

/** An amount in minor units: digits only, at least 1 ("1250" is 12.50) */
export function amountField (body: unknown, name = 'amount', required = true): number | null {
  const v = text(body, name)
  if (v === '') {
    if (required) throw new FormError(name, 'Give an amount in minor units (1250 is 12.50).')
    return null
  }
  if (!/^[0-9]{1,15}$/.test(v)) throw new FormError(name, `"${v}" is not an amount: digits only, in minor units (1250 is 12.50).`)
  try {
    return amountOf(v)
  } catch {
    throw new FormError(name, 'The amount must be at least 1 (minor units).')
  }
}

/** one of the listed words */
export function oneOf<T extends string> (body: unknown, name: string, allowed: readonly T[]): T {
  const v = text(body, name)
  if (!(allowed as readonly string[]).includes(v)) throw new FormError(name, `Choose one of ${allowed.join(', ')}.`)
  return v as T
}

/** a reference of the caller's (as the admin API's: 1 to 50 characters, no `:`) */
export function referenceField (body: unknown, name = 'reference'): string {
  const v = text(body, name)
  if (v === '' || v.length > 50 || v.includes(':')) throw new FormError(name, 'Give a reference of 1 to 50 characters, without ":" (the same reference again is a replay).')
  return v
}

/**
 * A time field: a browser's datetime-local (`2026-11-21T09:00`, read as UTC, as the page says) or a whole
 * ISO 8601 instant. '' is none.
 */
export function instantOf (v: string, name: string): number | undefined {
  if (v === '') return undefined
  const local = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?$/.test(v)
  const ms = Date.parse(local ? `${v}Z` : v)
  if (!/^\d{4}-\d\d-\d\dT/.test(v) || !Number.isFinite(ms)) throw new FormError(name, `"${v}" is not a date and time (2026-11-21T09:00, UTC).`)
  return ms
}
