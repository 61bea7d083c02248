// Amounts are integer minor units end to end, parsed once here from the request's digit strings.
import assert from 'node:assert'
import type { AuthRequest } from './request.js'

/** string(15) of the spec: the largest single amount a request or an admin call may carry. */
export const MAX_AMOUNT = 999_999_999_999_999

/** Minor units from a digit string; undefined when absent or not a safe integer. */
export function minorUnits (v: unknown): number | undefined {
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v)) return undefined
  const n = Number(v)
  return Number.isSafeInteger(n) ? n : undefined
}

/** (billingAmount when present, else transactionAmount) + (fee or 0); undefined without either amount. */
export function debitFrom (amount: number | undefined, billingAmount: number | undefined, fee: number | undefined): number | undefined {
  const base = billingAmount ?? amount
  return base === undefined ? undefined : base + (fee ?? 0)
}

/** The debit of a request that passed the body schema (each amount at most 15 digits). */
export function debitAmountOf (req: AuthRequest): number {
  const debit = debitFrom(minorUnits(req.transactionAmount), minorUnits(req.billingAmount), minorUnits(req.fee))
  assert(debit !== undefined, 'a validated request has a transactionAmount')
  return debit
}
