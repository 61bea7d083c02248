// Shared by both stores: limits on amounts and the normal form of a stored decision record.
import assert from 'node:assert'
import type { DecisionMeta, DecisionRecord } from './types.js'
import type { ControlHit } from '../domain/controls.js'

/** A balance stays below 2^53 so every store computes it exactly (Lua and JS numbers are doubles). */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER

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

/** Whose and when: what every decision record starts from, a tombstone's as much as a decision's. */
export interface RecordStart {
  urn: string
  reference: string
  last4: string
  attempt: string
  fingerprint: string
  arrivedAtMs: number
  deadlineAtMs: number
  decidedAtMs: number
}

/**
 * The deadline's 05 recorded before anything was decided: nothing held, nothing counted. A decision is this
 * record with what the store decided written over it, so the two cannot drift apart (the abandon script's
 * tombstone is `deadlineRecord` in src/store/lua/includes/common.lua; the authorize script writes a decision in the stored
 * format of src/store/record-format.ts, and test/store/record-format.test.ts holds the two stores' records equal).
 */
export function deadlineRecord (start: RecordStart): DecisionRecord {
  return {
    ...start,
    code: '05', reason: 'deadline', ruleId: null, debit: '0', held: '0', released: '0',
    shadowLimitHits: [], limitEntries: [], answeredOnDeadline: true, decidedCode: null, reversal: null, meta: null,
    controlEntries: [], control: null
  }
}

/** The `decision.created` event's data: what the record says, and the available balance the store saw. */
export function createdEventOf (rec: DecisionRecord, available: string | null): Record<string, unknown> {
  return {
    reference: rec.reference, last4: rec.last4, code: rec.code, reason: rec.reason, ruleId: rec.ruleId, control: rec.control,
    debit: rec.debit, held: rec.held, available, shadowLimitHits: rec.shadowLimitHits, decidedCode: rec.decidedCode,
    answeredOnDeadline: rec.answeredOnDeadline, arrivedAtMs: rec.arrivedAtMs, decidedAtMs: rec.decidedAtMs
  }
}
