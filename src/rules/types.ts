// The contract between the rule engine and the decision pipeline / store.
// The pipeline builds facts from the request, asks the compiled rule set to evaluate them (pure, no I/O),
// then hands the stateless decline (if any) and the matched limits to the store's atomic authorize step.
import type { ResponseCode } from '../decision/request.js'

export type FactValue = string | number | boolean | undefined

/**
 * Facts a rule can name (README "Rules"): every request field by name (strings as sent), `amount`,
 * `billingAmount`, `fee`, `debitAmount` (integers, minor units), `crossBorder`, `hour`, `dayOfWeek` (in
 * TIMEZONE), and `risk.ruleRating`, `risk.ruleSuggestion`, `risk.stepUp`, `risk.available`.
 */
export type Facts = Record<string, FactValue>

export type RuleMode = 'enforce' | 'shadow'

/** A matched rule, with the values of the fields it looked at. */
export interface RuleHit {
  ruleId: string
  code: ResponseCode
  mode: RuleMode
  values: Record<string, FactValue>
}

/**
 * A limit whose `when` matched this transaction. The store checks it and (for approved transactions)
 * records the transaction in the limit's window, atomically with the debit.
 */
export interface LimitCheck {
  ruleId: string
  mode: RuleMode
  measure: 'count' | 'amount'
  per: 'urn' | 'card'
  /** entries with a timestamp >= this (epoch ms) are inside the window (rolling: now - length; calendar: period start) */
  windowStartMs: number
  /** how long an entry must be kept for this window to be computed (>= the window's length) */
  retainMs: number
  max: number
  code: ResponseCode
  values: Record<string, FactValue>
}

export interface Evaluation {
  /** the first matching enforce rule without a limit that declines */
  decline: RuleHit | null
  /** shadow rules without a limit that matched (their would-be declines) */
  shadowHits: RuleHit[]
  /** matched limit rules, enforce and shadow, in rule order */
  limits: LimitCheck[]
}

export interface CompiledRuleSet {
  /** a hash of the rule set's content */
  version: string
  /** whether an active rule names a `risk.` field, so the risk service must be asked first */
  needsRisk: boolean
  /** the rules as loaded (for GET /admin/v1/rules) */
  rules: unknown[]
  /** pure: no I/O, no shared mutable state */
  evaluate (facts: Facts, nowMs: number): Evaluation
}
