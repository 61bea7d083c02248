// What a rule's match hands on: the rule hit a decision is declined by or records as shadow, and the limit
// the store checks and counts atomically with the debit. Shared by the rule engine, the pipeline and the store.
import type { ResponseCode } from './request.js'

export type FactValue = string | number | boolean | undefined

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
