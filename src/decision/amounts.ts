// Amounts are integer minor units end to end, parsed once here from the request's digit strings.
import type { AuthRequest } from './request.js'

function minor (v: string | undefined): number | undefined {
  return v === undefined || v === '' ? undefined : Number(v)
}

/** (billingAmount when present, else transactionAmount) + (fee or 0). The schema bounds each to 15 digits. */
export function debitAmountOf (req: AuthRequest): number {
  const base = minor(req.billingAmount) ?? minor(req.transactionAmount) ?? 0
  return base + (minor(req.fee) ?? 0)
}
