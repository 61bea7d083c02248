// One rule set's replay of the journal: each entry decided again in the service's order (customer/card state
// → card controls → rules → limits → funds), with limit windows and control daily totals built from this
// replay's own approvals. What the journal cannot replay is taken as recorded: customer and card state,
// funds (a transaction that met 51 meets it again), and answers that depended on timing (deadline, conflict).
import { localDay } from '../controls/input.js'
import type { JournalEntry } from '../domain/journal.js'
import type { CompiledRuleSet, Evaluation, Facts } from '../rules/types.js'
import type { LimitCheck } from '../domain/rule-hits.js'
import { zonedParts } from '../time.js'
import { ReplayState, type CardState, type CustomerState, type ReplayWindow } from './windows.js'

export interface ReplayOutcome {
  code: string
  reason: string
  /** the deciding rule (a rule or limit decline) */
  ruleId: string | null
  /** the deciding card control (`ATM`, `international`, ...) */
  control: string | null
  /** for a limit decline: the window's use before this transaction and its max */
  limit: { ruleId: string, usedBefore: number, max: number } | null
  /** rules of this set that would decline the transaction here: the deciding one, shadow rules and shadow limits */
  hits: string[]
}

/** Decisions made before the rules were asked; the replay keeps them as recorded. */
const STATE_REASONS: ReadonlySet<string> = new Set([
  'unknown_urn', 'customer_blocked', 'customer_closed', 'card_lost', 'card_stolen', 'card_blocked', 'card_unknown'
])

/** Answers that depended on timing or on another request, not on the rules. */
const TIMING_REASONS: ReadonlySet<string> = new Set(['deadline', 'conflict', 'store_error'])

const NO_HITS: string[] = []

/** The most common outcome, shared rather than built for every decision (outcomes are read, never changed). */
const APPROVED: ReplayOutcome = Object.freeze({ code: '00', reason: 'approved', ruleId: null, control: null, limit: null, hits: NO_HITS })

export function takenAsRecorded (e: JournalEntry): boolean {
  return e.answeredOnDeadline || TIMING_REASONS.has(e.reason)
}

function recorded (e: JournalEntry): ReplayOutcome {
  return { code: e.code, reason: e.reason, ruleId: e.ruleId, control: e.control?.kind ?? null, limit: e.limit, hits: NO_HITS }
}

/** The customer or card state's answer as recorded, or null when the state let the transaction through. */
function stateOutcome (e: JournalEntry): ReplayOutcome | null {
  if (STATE_REASONS.has(e.reason)) return recorded(e)
  let code: string | null = null
  let reason = ''
  if (e.customerStatus === 'BLOCKED') { code = '05'; reason = 'customer_blocked' } else if (e.customerStatus === 'CLOSED') { code = '05'; reason = 'customer_closed' } else if (e.cardStatus === 'LOST') { code = '41'; reason = 'card_lost' } else if (e.cardStatus === 'STOLEN') { code = '43'; reason = 'card_stolen' } else if (e.cardStatus === 'BLOCKED') { code = '05'; reason = 'card_blocked' }
  return code === null ? null : { code, reason, ruleId: null, control: null, limit: null, hits: NO_HITS }
}

/**
 * The control kinds that applied, in the order the store checks them: the channel's, then `international`,
 * into `out` (emptied first).
 */
function controlKinds (e: JournalEntry, out: string[]): string[] {
  out.length = 0
  const c = e.controls
  if (c === null) return out
  const channel = e.request.channel
  if (channel !== undefined && channel !== 'international' && Object.hasOwn(c, channel)) out.push(channel)
  if (Object.hasOwn(c, 'international')) out.push('international')
  return out
}

export interface ReplayerOptions {
  timezone: string
}

export class Replayer {
  readonly set: CompiledRuleSet
  private readonly timezone: string
  private readonly state = new ReplayState()
  /** the control kinds of the entry being decided: one list reused, as a decision is made in one go */
  private readonly kinds: string[] = []
  /** the local day last asked about, as its date number and as localDay's text (one string a day, not a decision) */
  private dayDate = Number.NaN
  private dayText = ''

  constructor (set: CompiledRuleSet, opts: ReplayerOptions) {
    this.set = set
    this.timezone = opts.timezone
  }

  /** localDay(atMs, zone), the same text, made once per local day */
  private localDay (atMs: number): string {
    const p = zonedParts(atMs, this.timezone)
    const date = (p.year * 100 + p.month) * 100 + p.day
    if (date !== this.dayDate) {
      this.dayText = localDay(atMs, this.timezone)
      this.dayDate = date
    }
    return this.dayText
  }

  private static window (c: CustomerState, card: CardState, l: LimitCheck): ReplayWindow {
    return l.per === 'card' ? card.window(l.ruleId) : c.ownWindow(l.ruleId)
  }

  /** The card controls' answer (every control off before any limit, as the store), or null when they pass. */
  private controlsOutcome (e: JournalEntry, atMs: number, card: CardState): ReplayOutcome | null {
    const kinds = controlKinds(e, this.kinds)
    if (kinds.length === 0) return null
    const c = e.controls as NonNullable<JournalEntry['controls']>
    for (const k of kinds) {
      if (!(c[k] as { enabled: boolean }).enabled) return { code: '05', reason: 'control_off', ruleId: null, control: k, limit: null, hits: NO_HITS }
    }
    let day: string | null = null
    for (const k of kinds) {
      const s = c[k] as { perTransactionMax: number | null, dailyMax: number | null }
      if (s.perTransactionMax !== null && e.debit > s.perTransactionMax) {
        return { code: '61', reason: 'control_limit', ruleId: null, control: k, limit: null, hits: NO_HITS }
      }
      if (s.dailyMax !== null) {
        day ??= this.localDay(atMs)
        if (card.dayTotal(k).on(day) + e.debit > s.dailyMax) {
          return { code: '61', reason: 'control_limit', ruleId: null, control: k, limit: null, hits: NO_HITS }
        }
      }
    }
    return null
  }

  /** Counts an approval in the windows of the limits that matched and in the controls' daily totals. */
  private approve (e: JournalEntry, atMs: number, limits: readonly LimitCheck[], customer: CustomerState, card: CardState): void {
    for (const l of limits) Replayer.window(customer, card, l).add(atMs, e.debit, atMs - l.retainMs)
    if (e.debit <= 0) return
    const kinds = controlKinds(e, this.kinds)
    if (kinds.length === 0) return
    const day = this.localDay(atMs)
    for (const k of kinds) card.dayTotal(k).add(day, e.debit)
  }

  /**
   * Decides the entry again with this set and counts it in this replay's windows. `known`: the customer's state
   * in this replay, when the caller keeps it (ShardReplay does, for both its replays with one lookup).
   */
  decide (e: JournalEntry, facts: Facts, atMs: number, known?: CustomerState): ReplayOutcome {
    if (takenAsRecorded(e)) return recorded(e)
    const state = stateOutcome(e)
    if (state !== null) return state
    const customer = known ?? this.state.customer(e.urn)
    // a line written by another tool may lack last4: its card windows are the '' card's, as before
    const card = customer.card((e.last4 as string | undefined) ?? '')
    const control = this.controlsOutcome(e, atMs, card)
    if (control !== null) return control

    const ev: Evaluation = this.set.evaluate(facts, atMs)
    // Most decisions hit nothing: their list is made only when there is something to put in it.
    let hits: string[] | null = null
    for (const h of ev.shadowHits) (hits ??= []).push(h.ruleId)
    let out: ReplayOutcome | null = null
    if (ev.decline !== null) {
      (hits ??= []).unshift(ev.decline.ruleId)
      out = { code: ev.decline.code, reason: 'rule', ruleId: ev.decline.ruleId, control: null, limit: null, hits }
    } else {
      for (const l of ev.limits) {
        const w = Replayer.window(customer, card, l)
        w.seek(l.windowStartMs)
        const usedBefore = l.measure === 'count' ? w.count : w.amount
        const used = usedBefore + (l.measure === 'count' ? 1 : e.debit)
        if (used <= l.max) continue
        if (l.mode === 'shadow') (hits ??= []).push(l.ruleId)
        else if (out === null) {
          (hits ??= []).unshift(l.ruleId)
          out = { code: l.code, reason: 'limit', ruleId: l.ruleId, control: null, limit: { ruleId: l.ruleId, usedBefore, max: l.max }, hits }
        }
      }
    }
    if (out !== null) return out
    if (e.reason === 'insufficient_funds') return { code: '51', reason: 'insufficient_funds', ruleId: null, control: null, limit: null, hits: hits ?? [] }
    this.approve(e, atMs, ev.limits, customer, card)
    return hits === null ? APPROVED : { code: '00', reason: 'approved', ruleId: null, control: null, limit: null, hits }
  }

  /** Keeps the recorded answer (its rules are not at hand) and counts a recorded approval in the windows. */
  keepRecorded (e: JournalEntry, facts: Facts, atMs: number, known?: CustomerState): ReplayOutcome {
    if (e.code === '00' && !takenAsRecorded(e)) {
      const customer = known ?? this.state.customer(e.urn)
      this.approve(e, atMs, this.set.evaluate(facts, atMs).limits, customer, customer.card((e.last4 as string | undefined) ?? ''))
    }
    return recorded(e)
  }
}
