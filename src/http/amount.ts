// Amounts on the admin listener: a digit string or a whole number of minor units, at least 1.
import { MAX_AMOUNT } from '../domain/amounts.js'
import { apiError } from '../errors.js'
import { worded } from './worded-errors.js'

export const amountSchema = {
  anyOf: worded([
    { type: 'string', pattern: '^[0-9]{1,15}$' },
    { type: 'integer', minimum: 1, maximum: MAX_AMOUNT }
  ], 'must be minor units as a digit string, e.g. 1250 for 12.50 (or a whole number)')
}

/** The schema lets "0" through (a digit string); the amount itself must be at least 1. */
export function amountOf (v: string | number): number {
  const n = typeof v === 'number' ? v : Number(v)
  if (!Number.isSafeInteger(n) || n < 1) throw apiError('VALIDATION', 'amount must be a whole number of minor units, at least 1')
  return n
}
