// The contract between the rule engine and the decision pipeline / store.
// The pipeline builds facts from the request, asks the compiled rule set to evaluate them (pure, no I/O),
// then hands the stateless decline (if any) and the matched limits to the store's atomic authorize step.
import type { FactValue, LimitCheck, RuleHit } from '../domain/rule-hits.js'

/**
 * Facts a rule can name (README "Rules"): every request field by name (strings as sent), `amount`,
 * `billingAmount`, `fee`, `debitAmount` (integers, minor units), `crossBorder`, `hour`, `dayOfWeek` (in
 * TIMEZONE), and `risk.ruleRating`, `risk.ruleSuggestion`, `risk.stepUp`, `risk.available`.
 */
export type Facts = Record<string, FactValue>

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
