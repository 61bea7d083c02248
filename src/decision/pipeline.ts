// The decision pipeline (README "The decision"): idempotency → customer/card state → stateless rules → risk (when a
// rule needs it) → funds and limits, the store's part being one atomic step. It never answers by itself
// after the deadline: the route's guard does, and runs the request's abort hook first, upon which a decision
// that may have been committed is compensated.
import { hash, randomBytes } from 'node:crypto'
import type { AuthRequest, ResponseCode } from '../domain/request.js'
import { debitAmountOf } from '../domain/amounts.js'
import { buildFacts, type RiskFacts } from '../rules/facts.js'
import type { CompiledRuleSet } from '../rules/types.js'
import type { RuleHit } from '../domain/rule-hits.js'
import { abandonInputOf, type AbandonInput, type AuthorizeInput, type DecisionReason, type Store } from '../store/types.js'
import type { Compensator } from './compensator.js'
import { isStoreNotDone } from '../errors.js'
import type { CardControls, ControlHit } from '../domain/controls.js'
import { controlsInputFor } from '../controls/input.js'
import type { AbortHook } from './deadline.js'
import type { StandIn, StandInResult } from '../standin/stand-in.js'

/** 'standin_declined': declined in stand-in by the policy or its caps (docs/operations/standin.md) */
export type PipelineReason = DecisionReason | 'store_error' | 'standin_declined'

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
  /** decided in stand-in: the store could not be reached (or stand-in is forced on) */
  standIn?: true
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
  /** deciding while the store is unreachable (STANDIN_POLICY_FILE); without: 05, as before */
  standIn?: StandIn
  /** SETTLEMENT_MODE=holds: when an approval of this MCC made now expires (src/settlement/config.ts); absent or undefined: final */
  holdExpiry?: (mcc: string | undefined, nowMs: number) => number | undefined
}

export interface DecideContext {
  arrivedAtMs: number
  deadlineAtMs: number
  /** the request's deadline guard (src/decision/deadline.ts): one per request */
  abort: AbortHook
  /** unique per request attempt; generated when absent */
  attempt?: string
}

/**
 * An attempt id: 72 random bits, 12 characters (every decision record keeps one; it tells apart the attempts
 * at one transaction). Taken from a pool of random
 * bytes, as randomUUID does, so that an id costs no call into the system's random source.
 */
const ATTEMPT_ID_BYTES = 9
let attemptPool = Buffer.alloc(0)
let attemptAt = 0
function attemptId (): string {
  if (attemptAt + ATTEMPT_ID_BYTES > attemptPool.length) {
    attemptPool = randomBytes(ATTEMPT_ID_BYTES * 512)
    attemptAt = 0
  }
  attemptAt += ATTEMPT_ID_BYTES
  return attemptPool.toString('base64url', attemptAt - ATTEMPT_ID_BYTES, attemptAt)
}

/** Leaves the store this much of the budget, so a risk call cannot eat the whole deadline. */
const STORE_RESERVE_MS = 50

/** Same reference with another debit amount or card is a conflict (README "The decision"). */
export function fingerprintOf (debitAmount: number, last4: string): string {
  return hash('sha256', `${debitAmount}|${last4}`, 'base64url').slice(0, 22)
}

/**
 * The specification's request fields, the only ones the journal keeps: a caller may send others (they are
 * ignored), and those could carry what must never be stored (a card number, a CVD2).
 */
const JOURNAL_FIELDS = [
  'customerId', 'urn', 'merchantName', 'terminalId', 'mcc', 'systemTraceAuditNumber', 'cardNetwork', 'channel', 'merchantId',
  'transactionAmount', 'fee', 'transactionReferenceNumber', 'currencyCode', 'last4Digits', 'originalRrn', 'orignialRrn',
  'billingCurrency', 'billingAmount', 'entityId'
] as const

/** The request's fields as received, for the journal (strings, the specification's fields only). */
function requestFields (req: AuthRequest): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of JOURNAL_FIELDS) {
    const v = req[k]
    if (typeof v === 'string') out[k] = v
  }
  return out
}

function holdOf (deps: DecisionDeps, mcc: string | undefined, nowMs: number): { holdExpiresAtMs?: number } {
  const at = deps.holdExpiry?.(mcc, nowMs)
  return at === undefined ? {} : { holdExpiresAtMs: at }
}

export async function decide (req: AuthRequest, ctx: DecideContext, deps: DecisionDeps): Promise<Decision> {
  const clock = deps.clock ?? Date.now
  const rules = deps.rules()
  const debitAmount = debitAmountOf(req)
  const attempt = ctx.attempt ?? attemptId()

  let risk: RiskFacts | null = null
  if (rules.needsRisk && deps.risk !== undefined) {
    const budgetMs = ctx.deadlineAtMs - clock() - STORE_RESERVE_MS
    risk = budgetMs > 0 ? await deps.risk(req, { budgetMs, signal: ctx.abort.signal }) : null
  }
  const facts = buildFacts(req, { nowMs: ctx.arrivedAtMs, timezone: deps.timezone, risk, defaultCurrency: deps.defaultCurrency })
  const ev = rules.evaluate(facts, ctx.arrivedAtMs)

  if (ctx.abort.aborted) {
    // the guard has answered; nothing was sent, nothing to undo
    return { debitAmount, rulesVersion: rules.version, code: '05', reason: 'deadline', ruleId: null, replayed: false, shadowHits: [] }
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
    controls: controlsInputFor(req.channel, facts.crossBorder === true, { nowMs: ctx.arrivedAtMs, timezone: deps.timezone, defaults: deps.controlDefaults }),
    ...holdOf(deps, req.mcc, ctx.arrivedAtMs),
    meta: {
      rulesVersion: rules.version,
      shadowHits: ev.shadowHits,
      transactionAmount: req.transactionAmount,
      currencyCode: req.currencyCode ?? deps.defaultCurrency ?? '',
      channel: req.channel,
      request: requestFields(req),
      ...(ev.decline !== null ? { decline: ev.decline } : {}),
      ...(ev.limits.length > 0 ? { limits: ev.limits.map((l) => ({ ruleId: l.ruleId, mode: l.mode, values: l.values })) } : {}),
      ...(risk !== null ? { risk } : {})
    }
  }
  // built only when it is needed: an abort or a failed store call
  const abandonInput = (tombstone: boolean): AbandonInput =>
    tombstone ? abandonInputOf(input) : { ...abandonInputOf(input), tombstone: false }

  const standIn = deps.standIn
  const inStandIn = async (r: Promise<StandInResult>): Promise<Decision> => {
    const s = await r
    // As a store that did nothing: an earlier attempt's hold is released when this one is declined. Not on
    // a conflict: that 05 refuses a request whose amount or card differs from the stand-in approval it met,
    // it decides nothing, and the first decision stands (docs/api/external-auth.md); an approval the store
    // holds for this amount and card is that decision, which stand-in cannot see.
    if (s.code !== '00' && s.reason !== 'conflict') deps.compensator?.abandon(abandonInput(false))
    const d: Decision = { debitAmount, rulesVersion: rules.version, code: s.code as ResponseCode, reason: s.reason, ruleId: s.ruleId, replayed: s.replayed, shadowHits: [], standIn: true }
    if (s.reason === 'rule') d.values = ev.decline?.values
    if (s.check !== undefined) d.values = { check: s.check }
    return d
  }
  if (standIn !== undefined) {
    // a repeat of a reference decided in stand-in and not replayed yet is answered from the journal
    const prior = standIn.prior(input)
    if (prior !== null) return await inStandIn(prior)
    if (standIn.forcedOn) return await inStandIn(standIn.decide(input, ev.decline, req.mcc ?? '', ctx.abort))
  }
  // One slot, set and cleared here: the hook holds nothing past this decision, whoever holds the hook. It is
  // kept after success until the guard lets go of the request (`finish` clears it): an abort before that
  // means the guard answered 05 without this decision.
  ctx.abort.onAbort(() => { deps.compensator?.abandon(abandonInput(true)) })
  let result
  try {
    result = await deps.store.authorize(input)
  } catch (err) {
    ctx.abort.onAbort(null)
    if (standIn?.takes(err) === true) return await inStandIn(standIn.decide(input, ev.decline, req.mcc ?? '', ctx.abort))
    // This attempt is answered 05. A store that surely did nothing (a typed error, see store/redis.ts `send`)
    // needs no tombstone, but an earlier attempt at the same reference may hold money the platform now hears
    // declined: release only that.
    deps.compensator?.abandon(abandonInput(!isStoreNotDone(err)))
    throw err
  }
  standIn?.storeAnswered()

  const shadowHits = ev.shadowHits.length === 0 && result.shadowLimitHits.length === 0 ? [] : [...ev.shadowHits.map((h: RuleHit) => h.ruleId), ...result.shadowLimitHits]
  const d: Decision = { debitAmount, rulesVersion: rules.version, code: result.code, reason: result.reason, ruleId: result.ruleId, replayed: result.replayed, shadowHits }
  if (result.reason === 'approved') return d
  const values = result.reason === 'rule'
    ? ev.decline?.values
    : result.reason === 'limit'
      ? ev.limits.find((l) => l.ruleId === result.ruleId)?.values
      : result.control !== undefined ? { ...result.control } : undefined
  if (values !== undefined) d.values = values
  if (result.control !== undefined) d.control = result.control
  return d
}
