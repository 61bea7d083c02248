// Shared by both stores: limits on amounts and the normal form of a stored decision record.
import assert from 'node:assert'
import type { DecisionMeta, DecisionRecord } from './types.js'
import type { ControlHit } from '../controls/types.js'

/** A balance stays below 2^53 so every store computes it exactly (Lua and JS numbers are doubles). */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER
/** string(15) of the spec: the largest single amount a request or an admin call may carry. */
export const MAX_AMOUNT = 999_999_999_999_999

/**
 * Amounts reach the store already parsed at the edge; anything else here is a programmer error, so it
 * crashes loudly instead of moving money (a negative debit would be a credit).
 */
export function assertAmount (amount: number, what: string, opts: { zero?: boolean } = {}): void {
  assert.ok(typeof amount === 'number' && Number.isSafeInteger(amount) && (amount > 0 || (opts.zero === true && amount === 0)),
    `${what} must be a safe ${opts.zero === true ? 'non-negative' : 'positive'} integer in minor units, got ${String(amount)}`)
}

/** Lua's cjson writes an empty array as {} and keeps meta as a JSON string; give callers one shape. */
export function normalizeRecord (raw: Record<string, unknown>): DecisionRecord {
  const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? v as T[] : [])
  let meta: DecisionMeta | null = null
  if (typeof raw.meta === 'string') meta = JSON.parse(raw.meta) as DecisionMeta
  else if (raw.meta !== null && typeof raw.meta === 'object') meta = raw.meta as DecisionMeta
  const reversal = raw.reversal !== null && typeof raw.reversal === 'object'
    ? { amount: String((raw.reversal as Record<string, unknown>).amount), atMs: Number((raw.reversal as Record<string, unknown>).atMs) }
    : null
  return {
    ...(raw as unknown as DecisionRecord),
    ruleId: typeof raw.ruleId === 'string' ? raw.ruleId : null,
    decidedCode: typeof raw.decidedCode === 'string' ? raw.decidedCode as DecisionRecord['decidedCode'] : null,
    shadowLimitHits: arr<string>(raw.shadowLimitHits),
    limitEntries: arr<[string, string]>(raw.limitEntries),
    reversal,
    meta,
    controlEntries: arr<[string, string]>(raw.controlEntries),
    control: controlHitOf(raw.control)
  }
}

/** A control hit as a store wrote it (Lua keeps its amounts as strings) in numbers. */
export function controlHitOf (raw: unknown): ControlHit | null {
  if (raw === null || typeof raw !== 'object') return null
  const h = raw as Record<string, unknown>
  return {
    control: h.control as ControlHit['control'],
    check: h.check as ControlHit['check'],
    ...(h.limit !== undefined ? { limit: Number(h.limit) } : {}),
    ...(h.totalBefore !== undefined ? { totalBefore: Number(h.totalBefore) } : {}),
    debit: Number(h.debit)
  }
}
