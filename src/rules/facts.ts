// Builds the facts rules are evaluated against from one request (README "Rules"). Built once per request.
import type { AuthRequest } from '../domain/request.js'
import { zonedParts } from '../time.js'
import { REQUEST_STRING_FIELDS } from './fields.js'
import { debitFrom, minorUnits } from '../domain/amounts.js'
import type { Facts } from './types.js'

/** What the risk service said, as the risk adapter hands it over; null/undefined when it was not asked. */
export interface RiskFacts {
  available: boolean
  ruleRating?: number
  ruleSuggestion?: string
  stepUp?: boolean
}

export interface FactsOptions {
  nowMs: number
  /** IANA zone for `hour` and `dayOfWeek` */
  timezone: string
  risk?: RiskFacts | null
  /**
   * The currency of a request without `currencyCode` (DEFAULT_CURRENCY), for `crossBorder`. Without it, a
   * request with a billing currency and no currencyCode counts as cross-border.
   */
  defaultCurrency?: string
}

export function buildFacts (req: AuthRequest, opts: FactsOptions): Facts {
  const f: Facts = {}
  for (const name of REQUEST_STRING_FIELDS) {
    const v = req[name]
    if (typeof v === 'string') f[name] = v
  }
  if (f.originalRrn === undefined && f.orignialRrn !== undefined) f.originalRrn = f.orignialRrn

  const amount = minorUnits(req.transactionAmount)
  const billingAmount = minorUnits(req.billingAmount)
  const fee = minorUnits(req.fee)
  f.amount = amount
  f.billingAmount = billingAmount
  f.fee = fee
  f.debitAmount = debitFrom(amount, billingAmount, fee)

  const billingCurrency = f.billingCurrency as string | undefined
  const currency = (f.currencyCode as string | undefined) ?? opts.defaultCurrency
  f.crossBorder = billingCurrency !== undefined && billingCurrency !== currency

  const p = zonedParts(opts.nowMs, opts.timezone)
  f.hour = p.hour
  // ISO weekday: 1 = Monday ... 7 = Sunday
  f.dayOfWeek = p.isoWeekday

  const risk = opts.risk
  if (risk != null && risk.available) {
    f['risk.available'] = true
    f['risk.ruleRating'] = risk.ruleRating
    f['risk.ruleSuggestion'] = risk.ruleSuggestion
    f['risk.stepUp'] = risk.stepUp
  } else {
    f['risk.available'] = false
  }
  return f
}
