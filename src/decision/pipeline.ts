// The decision pipeline (README "The decision"): idempotency → customer/card state → stateless rules → risk (when a
// rule needs it) → funds and limits, the store's part being one atomic step. It never answers by itself
// after the deadline: the route's guard does, and aborts `signal`, upon which a decision that may have been
// committed is compensated.
import { createHash, randomUUID } from 'node:crypto'
import type { AuthRequest, ResponseCode } from './request.js'
import { debitAmountOf } from './amounts.js'
import { buildFacts, type RiskFacts } from '../rules/facts.js'
import type { CompiledRuleSet, RuleHit } from '../rules/types.js'
import type { AbandonInput, AuthorizeInput, DecisionReason, Store } from '../store/types.js'
import type { Compensator } from './compensator.js'
import { isStoreNotDone } from '../errors.js'
import type { CardControls, ControlHit } from '../controls/types.js'
import { controlsInputFor } from '../controls/input.js'

export type PipelineReason = DecisionReason | 'store_error'

export interface Decision {
  code: ResponseCode
  reason: PipelineReason
  ruleId: string | null
  replayed: boolean
  /** shadow rules (and shadow limits) that would have declined */
  shadowHits: string[]
  debitAmount: number
  rulesVersion: string
  /** the values the deciding rule saw */
  values?: Record<string, unknown>
  /** the card control that declined, with the values it saw */
  control?: ControlHit
}

export interface RiskLookupOptions {
  /** ms left for the call */
  budgetMs: number
  signal: AbortSignal
}
/** Asks the risk service; resolves null (never rejects) when it cannot answer in time. */
export type RiskLookup = (req: AuthRequest, opts: RiskLookupOptions) => Promise<RiskFacts | null>

export interface DecisionDeps {
  store: Store
  rules: () => CompiledRuleSet
  timezone: string
  defaultCurrency?: string
  clock?: () => number
  risk?: RiskLookup
  compensator?: Compensator
  /** the program's default card controls (CARD_CONTROLS_FILE); without: every kind enabled, no limit */
  controlDefaults?: CardControls
}

export interface DecideContext {
  arrivedAtMs: number
  deadlineAtMs: number
  signal: AbortSignal
  /** unique per request attempt; generated when absent */
  attempt?: string
}

/** Leaves the store this much of the budget, so a risk call cannot eat the whole deadline. */
const STORE_RESERVE_MS = 50

/** Same reference with another debit amount or card is a conflict (README "The decision"). */
export function fingerprintOf (debitAmount: number, last4: string): string {
  return createHash('sha256').update(`${debitAmount}|${last4}`).digest('base64url').slice(0, 22)
}


export async function decide (req: AuthRequest, ctx: DecideContext, deps: DecisionDeps): Promise<Decision> {
  const clock = deps.clock ?? Date.now
  const rules = deps.rules()
  const debitAmount = debitAmountOf(req)
  const attempt = ctx.attempt ?? randomUUID()

  let risk: RiskFacts | null = null
  if (rules.needsRisk && deps.risk !== undefined) {
    const budgetMs = ctx.deadlineAtMs - clock() - STORE_RESERVE_MS
    risk = budgetMs > 0 ? await deps.risk(req, { budgetMs, signal: ctx.signal }) : null
  }
  const facts = buildFacts(req, { nowMs: ctx.arrivedAtMs, timezone: deps.timezone, risk, defaultCurrency: deps.defaultCurrency })
  const ev = rules.evaluate(facts, ctx.arrivedAtMs)

  const base = { debitAmount, rulesVersion: rules.version }
  if (ctx.signal.aborted) {
    // the guard has answered; nothing was sent, nothing to undo
    return { ...base, code: '05', reason: 'deadline', ruleId: null, replayed: false, shadowHits: [] }
  }

  const input: AuthorizeInput = {
    urn: req.urn,
    last4: req.last4Digits,
    reference: req.transactionReferenceNumber,
    attempt,
    debitAmount,
    fingerprint: fingerprintOf(debitAmount, req.last4Digits),
    nowMs: ctx.arrivedAtMs,
    deadlineAtMs: ctx.deadlineAtMs,
    decline: ev.decline,
    limits: ev.limits,
    controls: controlsInputFor(req.channel, facts.crossBorder === true, { nowMs: ctx.arrivedAtMs, timezone: deps.timezone, ...(deps.controlDefaults !== undefined ? { defaults: deps.controlDefaults } : {}) }),
    meta: {
      rulesVersion: rules.version,
      shadowHits: ev.shadowHits,
      transactionAmount: req.transactionAmount,
      currencyCode: req.currencyCode ?? deps.defaultCurrency ?? '',
      channel: req.channel,
      ...(ev.decline !== null ? { decline: ev.decline } : {}),
      ...(ev.limits.length > 0 ? { limits: ev.limits.map((l) => ({ ruleId: l.ruleId, mode: l.mode, values: l.values })) } : {}),
      ...(risk !== null ? { risk } : {})
    }
  }
  const abandonInput: AbandonInput = {
    urn: input.urn,
    reference: input.reference,
    attempt,
    fingerprint: input.fingerprint,
    limits: input.limits,
    last4: input.last4,
    arrivedAtMs: ctx.arrivedAtMs,
    deadlineAtMs: ctx.deadlineAtMs,
    ...(input.controls !== undefined ? { controls: input.controls } : {})
  }
  const compensate = (): void => { deps.compensator?.abandon(abandonInput) }
  ctx.signal.addEventListener('abort', compensate, { once: true })

  // The listener stays after success: an abort then means the guard answered 05 without this decision.
  let result
  try {
    result = await deps.store.authorize(input)
  } catch (err) {
    ctx.signal.removeEventListener('abort', compensate)
    // only a store that surely did nothing needs no undoing (a typed error, see store/redis.ts `send`)
    if (!isStoreNotDone(err)) compensate()
    throw err
  }

  const shadowHits = [...ev.shadowHits.map((h: RuleHit) => h.ruleId), ...result.shadowLimitHits]
  let values: Record<string, unknown> | undefined
  if (result.reason === 'rule') values = ev.decline?.values
  else if (result.reason === 'limit') values = ev.limits.find((l) => l.ruleId === result.ruleId)?.values
  else if (result.control !== undefined) values = { ...result.control }
  return {
    ...base,
    code: result.code,
    reason: result.reason,
    ruleId: result.ruleId,
    replayed: result.replayed,
    shadowHits,
    ...(values !== undefined ? { values } : {}),
    ...(result.control !== undefined ? { control: result.control } : {})
  }
}
