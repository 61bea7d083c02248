// The reference model of the money simulation: what every store operation must do, written from the
// README's rules as plain data, without the stores' code. The simulation applies each store call to the
// model at the instant the real store executes it, and compares the two answers; the state of both is
// compared after every step.
import type { ControlEntries, ControlEntry } from '../../../src/domain/controls.js'
import type { CardStatus, CustomerStatus } from '../../../src/store/types.js'

export const MAX_AMOUNT = 999_999_999_999_999
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER

/** The rule set the simulation runs with, as rule files say it, and as the model computes it. */
export const SIM_RULES = [
  { id: 'sim-block-gambling', when: { mcc: { eq: '7995' } }, then: { decline: '05' } },
  { id: 'sim-atm-count', when: { channel: { eq: 'ATM' } }, limit: { measure: 'count', per: 'card', window: '1h', max: 3 }, then: { decline: '65' } },
  { id: 'sim-day-amount', when: { debitAmount: { gte: 0 } }, limit: { measure: 'amount', per: 'urn', window: 'day', max: 200_000 }, then: { decline: '61' } },
  { id: 'sim-ecom-month-shadow', mode: 'shadow', when: { channel: { eq: 'ECOM' } }, limit: { measure: 'count', per: 'urn', window: 'month', max: 2 }, then: { decline: '65' } },
  { id: 'sim-card-amount-20m', when: { debitAmount: { gte: 0 } }, limit: { measure: 'amount', per: 'card', window: '20m', max: 25_000 }, then: { decline: '61' } }
] as const

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** The simulation's TIMEZONE: local days are not UTC days, and the zone has no summer time */
export const SIM_TIMEZONE = 'Asia/Kolkata'
const ZONE_OFFSET_MS = 5.5 * HOUR
/** The start of the local day of an instant */
function localDayStart (now: number): number {
  return Math.floor((now + ZONE_OFFSET_MS) / DAY) * DAY - ZONE_OFFSET_MS
}
/** The local day of an instant as the controls' daily totals count it (YYYYMMDD) */
export function localDayOf (now: number): string {
  return new Date(now + ZONE_OFFSET_MS).toISOString().slice(0, 10).replaceAll('-', '')
}
/** Control kinds of the simulation's channels (none of its requests is cross-border) */
const CONTROL_KIND_OF_CHANNEL = new Set(['POS', 'ATM', 'ECOM', 'POS-Contactless'])
const CONTROL_ORDER = ['POS', 'ATM', 'ECOM', 'POS-Contactless', 'international'] as const

/** A card's own control entries in one order, whatever order a store keeps them in. */
export function canonControls (e: ControlEntries): ControlEntries {
  const out: ControlEntries = {}
  for (const kind of CONTROL_ORDER) {
    const x = e[kind]
    if (x === undefined) continue
    const c: ControlEntry = {}
    if (x.enabled !== undefined) c.enabled = x.enabled
    if (x.perTransactionMax !== undefined) c.perTransactionMax = x.perTransactionMax
    if (x.dailyMax !== undefined) c.dailyMax = x.dailyMax
    // a kind without a field of its own is not set: the store keeps fields, not kinds
    if (Object.keys(c).length > 0) out[kind] = c
  }
  return out
}
/**
 * The reversal horizon (DECISION_RETENTION_DAYS, its default): decisions and credit/debit references are
 * kept this long, and a decision as long as a window it has an entry in counts, and a day more.
 */
export const RETENTION_MS = 8 * DAY
/** SETTLEMENT_MODE=holds in the simulation: a hold expires this long after its approval (a run spans hours) */
export const SIM_HOLD_EXPIRY_MS = 15 * 60_000

export interface ModelLimit {
  ruleId: string
  per: 'urn' | 'card'
  measure: 'count' | 'amount'
  enforce: boolean
  max: number
  code: string
  applies: (r: ModelAuth) => boolean
  windowStart: (nowMs: number) => number
  retainMs: number
}

/** The limits of SIM_RULES, computed here (the calendar of SIM_TIMEZONE). */
export const MODEL_LIMITS: ModelLimit[] = [
  { ruleId: 'sim-atm-count', per: 'card', measure: 'count', enforce: true, max: 3, code: '65', applies: (r) => r.channel === 'ATM', windowStart: (now) => now - HOUR, retainMs: HOUR },
  { ruleId: 'sim-day-amount', per: 'urn', measure: 'amount', enforce: true, max: 200_000, code: '61', applies: () => true, windowStart: localDayStart, retainMs: 25 * HOUR },
  {
    ruleId: 'sim-ecom-month-shadow',
    per: 'urn',
    measure: 'count',
    enforce: false,
    max: 2,
    code: '65',
    applies: (r) => r.channel === 'ECOM',
    windowStart: (now) => { const d = new Date(now + ZONE_OFFSET_MS); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - ZONE_OFFSET_MS },
    retainMs: 31 * DAY + HOUR
  },
  // a rolling amount window: its start falls anywhere in a minute, so its totals' partial edge is exercised
  { ruleId: 'sim-card-amount-20m', per: 'card', measure: 'amount', enforce: true, max: 25_000, code: '61', applies: () => true, windowStart: (now) => now - 20 * 60_000, retainMs: 20 * 60_000 }
]

export interface ModelAuth {
  urn: string
  reference: string
  last4: string
  debit: number
  channel: string
  mcc: string
  nowMs: number
}

export interface ModelCustomer { status: CustomerStatus, available: number, cards: Map<string, CardStatus> }

export interface ModelDecision {
  urn: string
  reference: string
  last4: string
  debit: number
  code: string
  reason: string
  attempt: string
  /** arrival of the attempt that owns the decision: the platform acts on its latest attempt's answer */
  attemptAtMs: number
  answeredOnDeadline: boolean
  held: number
  released: number
  /** a stand-in approval replayed (a 00 whatever the store held; with an unknown urn, holding nothing) */
  standIn?: true
  /** holds mode: the approval is a hold (expiry releases it); an approval of before (an earlier record) is final */
  hold?: boolean
  /** holds mode: an expiry run released the hold (a clearing after it is late and debits again) */
  expired?: boolean
  /** holds mode: what the platform's statements cleared against it */
  cleared?: number
  /** holds mode: what of its hold the statements posted (held + released + posted is the debit) */
  posted?: number
  reversal: { requested: number | null, amount: number } | null
  /** the windows this decision has an entry in */
  windows: string[]
  atMs: number
  /** after this (on the store's clock) the store may forget the decision */
  expiresAtMs: number
  /** the card controls' daily totals this decision counts in */
  controlDays: string[]
  /** the card's control as it stood when the decision was made, and the day's total before it */
  control: { enabled: boolean, perTransactionMax: number | null, dailyMax: number | null, totalBefore: number } | null
}

export interface WindowEntry { reference: string, amount: number, atMs: number }

/** What a store call must answer: a value, or a rejection with a code ('INVALID' for any refusal of bad input). */
export type Expect<T> = { ok: T } | { err: string }

const k2 = (a: string, b: string): string => JSON.stringify([a, b])

export function windowId (ruleId: string, urn: string, last4: string | null): string {
  return JSON.stringify([ruleId, urn, last4])
}

function safeAmount (n: number): boolean {
  return Number.isSafeInteger(n) && n > 0 && n <= MAX_AMOUNT
}

export class Model {
  readonly customers = new Map<string, ModelCustomer>()
  /** told of every change of a customer's available balance (the stand-in books follow balances below zero) */
  onBalance: ((urn: string, available: number) => void) | null = null
  readonly decisions = new Map<string, ModelDecision>()
  readonly moneyOps = new Map<string, { amount: number, expiresAtMs: number }>()
  readonly windows = new Map<string, WindowEntry[]>()
  /** decisions past their retention: what was answered for them is history */
  readonly forgotten = new Set<string>()
  /** every credit and debit ever applied, by [urn, kind, reference]: the money moved, kept past retention */
  readonly moved = new Map<string, number>()
  /** the net debit of each held move's hold and release references, by [urn, kind, id] */
  private readonly holds = new Map<string, number>()
  /** each card's own control entries, by [urn, last4] */
  readonly controls = new Map<string, ControlEntries>()
  /** the controls' daily totals of approved, unreleased debits, by [urn, last4, kind, local day] */
  readonly dailyTotals = new Map<string, number>()

  /** customers a stand-in replay took below zero (the only way a balance goes there), until checked at zero or above */
  readonly belowZero = new Set<string>()

  /** holds whose decision is forgotten before an expiry run released them (the stores' hold index keeps their amount) */
  readonly orphanHolds: Array<{ urn: string, reference: string, last4: string, held: number }> = []
  /** holds mode: how long after its approval a hold expires; its decision is kept that much longer (as the stores keep it) */
  holdTtlMs = 0

  constructor (private readonly now: () => number) {}

  decision (urn: string, reference: string): ModelDecision | undefined {
    const key = k2(urn, reference)
    const d = this.decisions.get(key)
    if (d !== undefined && d.expiresAtMs <= this.now()) {
      this.decisions.delete(key)
      this.forgotten.add(key)
      // a hold whose decision is gone before an expiry run: the next run gives back what it holds
      if (d.hold === true && d.code === '00' && d.held > 0) this.orphanHolds.push({ urn: d.urn, reference: d.reference, last4: d.last4, held: d.held })
      return undefined
    }
    return d
  }

  moneyOp (urn: string, kind: 'credit' | 'debit', reference: string): number | undefined {
    const key = JSON.stringify([urn, kind, reference])
    const op = this.moneyOps.get(key)
    if (op !== undefined && op.expiresAtMs <= this.now()) {
      this.moneyOps.delete(key)
      return undefined
    }
    return op?.amount
  }

  private used (l: ModelLimit, urn: string, last4: string, nowMs: number): { count: number, amount: number } {
    const entries = this.windows.get(windowId(l.ruleId, urn, l.per === 'card' ? last4 : null)) ?? []
    const start = l.windowStart(nowMs)
    let count = 0
    let amount = 0
    for (const e of entries) {
      if (e.atMs >= start) { count++; amount += e.amount }
    }
    return { count, amount }
  }

  /**
   * `standIn`: the replay of a stand-in approval (docs/operations/standin.md): a reference already decided is
   * answered as always; otherwise it is recorded as the 00 it was answered, whatever the customer's and card's
   * state, controls, limits and balance (debited below zero if it must be); an unknown urn is a 00 holding nothing.
   */
  authorize (r: ModelAuth, attempt: string, storeLate: boolean, standIn = false): Expect<{ code: string, reason: string, replayed: boolean }> {
    const key = k2(r.urn, r.reference)
    const d = this.decision(r.urn, r.reference)
    if (d !== undefined) {
      if (d.debit !== r.debit || d.last4 !== r.last4) return { ok: { code: '05', reason: 'conflict', replayed: false } }
      // a later (or simultaneous) attempt answering with the decision owns it; an earlier one arriving late does not
      if (!d.answeredOnDeadline && r.nowMs >= d.attemptAtMs) { d.attempt = attempt; d.attemptAtMs = r.nowMs }
      return { ok: { code: d.code, reason: d.reason, replayed: true } }
    }
    let code = '00'
    let reason = 'approved'
    let control: ModelDecision['control'] = null
    const c = this.customers.get(r.urn)
    if (standIn) {
      // recorded, not checked
    } else if (c === undefined) { code = '14'; reason = 'unknown_urn' } else if (c.status !== 'ACTIVE') {
      code = '05'; reason = c.status === 'BLOCKED' ? 'customer_blocked' : 'customer_closed'
    } else {
      const card = c.cards.get(r.last4)
      if (card === 'LOST') { code = '41'; reason = 'card_lost' } else if (card === 'STOLEN') { code = '43'; reason = 'card_stolen' } else if (card === 'BLOCKED') { code = '05'; reason = 'card_blocked' } else if (card === undefined && c.cards.size > 0) { code = '14'; reason = 'card_unknown' } else {
        control = this.controlOf(r)
        if (control !== null && !control.enabled) { code = '05'; reason = 'control_off' } else if (control !== null && ((control.perTransactionMax !== null && r.debit > control.perTransactionMax) ||
          (control.dailyMax !== null && control.totalBefore + r.debit > control.dailyMax))) { code = '61'; reason = 'control_limit' } else if (r.mcc === '7995') { code = '05'; reason = 'rule' }
      }
    }
    const limits = MODEL_LIMITS.filter((l) => l.applies(r))
    if (code === '00' && !standIn) {
      for (const l of limits) {
        if (!l.enforce) continue
        const u = this.used(l, r.urn, r.last4, r.nowMs)
        const would = l.measure === 'count' ? u.count + 1 : u.amount + r.debit
        if (would > l.max) { code = l.code; reason = 'limit'; break }
      }
    }
    if (code === '00' && !standIn && r.debit > (c as ModelCustomer).available) { code = '51'; reason = 'insufficient_funds' }
    if (storeLate) { code = '05'; reason = 'deadline' }
    // a new decision of the reference and card of a hold whose decision is gone takes its place in the stores'
    // hold index: the old hold is given back first, as an expiry run would (whatever the new decision)
    const orphan = this.orphanHolds.findIndex((o) => o.urn === r.urn && o.reference === r.reference && o.last4 === r.last4)
    if (orphan >= 0) {
      const o = this.orphanHolds.splice(orphan, 1)[0] as { held: number }
      if (c !== undefined) c.available += o.held
    }
    let ttl = limits.reduce((t, l) => Math.max(t, l.retainMs + DAY), RETENTION_MS)
    // holds mode: an approval's decision is kept past its hold's expiry by as long again (src/store/hold-ttl.ts)
    const hold = code === '00' && c !== undefined && r.debit > 0 && this.holdTtlMs > 0
    if (hold) ttl += this.holdTtlMs
    const nd: ModelDecision = {
      urn: r.urn, reference: r.reference, last4: r.last4, debit: r.debit, code, reason, attempt, attemptAtMs: r.nowMs,
      answeredOnDeadline: storeLate, held: 0, released: 0, reversal: null, windows: [], atMs: r.nowMs, expiresAtMs: this.now() + ttl,
      controlDays: [], control, ...(hold ? { hold } : {}), ...(standIn ? { standIn } : {})
    }
    if (code === '00' && c !== undefined) {
      c.available -= r.debit
      if (standIn && c.available < 0) this.belowZero.add(r.urn)
      nd.held = r.debit
      for (const l of limits) {
        const w = windowId(l.ruleId, r.urn, l.per === 'card' ? r.last4 : null)
        let list = this.windows.get(w)
        if (list === undefined) this.windows.set(w, list = [])
        list.push({ reference: r.reference, amount: r.debit, atMs: r.nowMs })
        nd.windows.push(w)
      }
      if (r.debit > 0 && CONTROL_KIND_OF_CHANNEL.has(r.channel)) {
        const day = this.dayKey(r)
        this.dailyTotals.set(day, (this.dailyTotals.get(day) ?? 0) + r.debit)
        nd.controlDays.push(day)
      }
    }
    this.decisions.set(key, nd)
    this.forgotten.delete(key)
    return { ok: { code, reason, replayed: false } }
  }

  private dayKey (r: { urn: string, last4: string, channel: string, nowMs: number }): string {
    return JSON.stringify([r.urn, r.last4, r.channel, localDayOf(r.nowMs)])
  }

  /** The card's control of the request's channel (the card's own fields over "enabled, no limit"). */
  private controlOf (r: ModelAuth): ModelDecision['control'] {
    if (!CONTROL_KIND_OF_CHANNEL.has(r.channel)) return null
    const own = this.controls.get(k2(r.urn, r.last4))?.[r.channel as 'POS']
    return {
      enabled: own?.enabled ?? true,
      perTransactionMax: own?.perTransactionMax ?? null,
      dailyMax: own?.dailyMax ?? null,
      totalBefore: this.dailyTotals.get(this.dayKey(r)) ?? 0
    }
  }

  /** `amount` leaves the decision's daily totals; `left` is what it still counts in them */
  private giveBackDaily (d: ModelDecision, amount: number, left: number): void {
    for (const day of d.controlDays) {
      const cur = this.dailyTotals.get(day) ?? 0
      if (cur - amount <= 0) this.dailyTotals.delete(day)
      else this.dailyTotals.set(day, cur - amount)
    }
    if (left === 0) d.controlDays = []
  }

  private cardOf (urn: string, last4: string): Expect<null> {
    const c = this.customers.get(urn)
    if (c === undefined) return { err: 'CUSTOMER_NOT_FOUND' }
    if (!c.cards.has(last4)) return { err: 'CARD_NOT_FOUND' }
    return { ok: null }
  }

  cardControls (urn: string, last4: string): Expect<ControlEntries> {
    const card = this.cardOf(urn, last4)
    if ('err' in card) return card
    return { ok: canonControls(this.controls.get(k2(urn, last4)) ?? {}) }
  }

  patchCardControls (urn: string, last4: string, patch: ControlEntries): Expect<ControlEntries> {
    const card = this.cardOf(urn, last4)
    if ('err' in card) return card
    const own = { ...(this.controls.get(k2(urn, last4)) ?? {}) }
    for (const kind of CONTROL_ORDER) {
      const p = patch[kind]
      if (p === undefined) continue
      const e: ControlEntry = { ...own[kind] }
      if (p.enabled !== undefined) e.enabled = p.enabled
      if (p.perTransactionMax !== undefined) e.perTransactionMax = p.perTransactionMax
      if (p.dailyMax !== undefined) e.dailyMax = p.dailyMax
      own[kind] = e
    }
    this.controls.set(k2(urn, last4), own)
    return { ok: canonControls(own) }
  }

  /**
   * A statement line settles a hold, by the model's own rules: `rel` of what it holds goes back to the
   * cardholder (its window entries and daily totals with it), `keep` is posted; the window keeps what is posted.
   */
  settleHold (d: ModelDecision, rel: number, keep: number): void {
    const left = d.held - rel - keep
    if (rel > 0) {
      for (const w of d.windows) {
        const list = this.windows.get(w) ?? []
        const i = list.findIndex((e) => e.reference === d.reference && e.atMs === d.atMs)
        if (i < 0) continue
        const e = list[i] as WindowEntry
        if (d.held - rel > 0) e.amount = d.held - rel
        else list.splice(i, 1)
      }
      this.giveBackDaily(d, rel, left)
    }
    if (left <= 0) { d.windows = []; d.controlDays = [] }
    d.held = left
    d.released += rel
    if (keep > 0) d.posted = (d.posted ?? 0) + keep
  }

  private dropEntries (d: ModelDecision): void {
    for (const w of d.windows) {
      const list = this.windows.get(w) ?? []
      const i = list.findIndex((e) => e.reference === d.reference && e.atMs === d.atMs)
      if (i >= 0) list.splice(i, 1)
    }
    d.windows = []
  }

  abandon (urn: string, reference: string, attempt: string, last4: string, debit: number, nowMs: number, tombstone = true): Expect<string> {
    const key = k2(urn, reference)
    const d = this.decision(urn, reference)
    if (d === undefined) {
      // an attempt that surely never reached the store only releases; it leaves nothing behind
      if (!tombstone) return { ok: 'untouched' }
      this.decisions.set(key, {
        urn, reference, last4, debit, code: '05', reason: 'deadline', attempt, attemptAtMs: nowMs, answeredOnDeadline: true,
        held: 0, released: 0, reversal: null, windows: [], atMs: nowMs, expiresAtMs: this.now() + RETENTION_MS, controlDays: [], control: null
      })
      this.forgotten.delete(key)
      return { ok: 'tombstoned' }
    }
    if (d.answeredOnDeadline) return { ok: 'untouched' }
    if (d.attempt !== attempt) {
      // a strictly later attempt at the same transaction answered 05: the platform heard that last
      if (d.debit !== debit || d.last4 !== last4 || nowMs <= d.attemptAtMs) return { ok: 'untouched' }
      d.attempt = attempt
      d.attemptAtMs = nowMs
    }
    const c = this.customers.get(urn)
    if (c !== undefined) c.available += d.held
    this.giveBackDaily(d, d.held, 0)
    d.released += d.held
    d.held = 0
    this.dropEntries(d)
    d.code = '05'
    d.reason = 'deadline'
    d.answeredOnDeadline = true
    return { ok: 'released' }
  }

  /**
   * Holds mode: every approval still holding something that is due by asOfMs (its arrival + holdMs) is released
   * whole, as expiry does: its window entries and daily totals given back. Returns the customers touched.
   */
  expireDue (asOfMs: number, holdMs: number): string[] {
    const urns: string[] = []
    for (const o of this.orphanHolds.splice(0)) {
      const c = this.customers.get(o.urn)
      if (c !== undefined) c.available += o.held
      urns.push(o.urn)
    }
    for (const d of this.decisions.values()) {
      if (d.hold !== true || d.code !== '00' || d.held <= 0 || d.atMs + holdMs > asOfMs) continue
      const c = this.customers.get(d.urn)
      if (c !== undefined) c.available += d.held
      this.giveBackDaily(d, d.held, 0)
      d.released += d.held
      d.held = 0
      d.expired = true
      this.dropEntries(d)
      urns.push(d.urn)
    }
    return urns
  }

  reverse (urn: string, reference: string, amount: number | null): Expect<{ released: number, replayed: boolean }> {
    if (amount !== null && !safeAmount(amount)) return { err: 'INVALID' }
    const d = this.decision(urn, reference)
    if (d === undefined) return { err: 'DECISION_NOT_FOUND' }
    if (d.reversal !== null) {
      if (d.reversal.requested === amount) return { ok: { released: d.reversal.amount, replayed: true } }
      return { err: 'ALREADY_REVERSED' }
    }
    if (d.code !== '00') return { err: 'NOT_APPROVED' }
    const amt = amount ?? d.held
    if (amt > d.held) return { err: 'EXCEEDS_HOLD' }
    const c = this.customers.get(urn)
    if (c !== undefined) c.available += amt
    d.held -= amt
    d.released += amt
    d.reversal = { requested: amount, amount: amt }
    this.giveBackDaily(d, amt, d.held)
    // the window keeps what is still held: a whole reversal takes the entry out
    for (const w of d.windows) {
      const e = (this.windows.get(w) ?? []).find((x) => x.reference === reference && x.atMs === d.atMs)
      if (e !== undefined) e.amount = d.held
    }
    if (d.held === 0) this.dropEntries(d)
    return { ok: { released: amt, replayed: false } }
  }

  money (kind: 'credit' | 'debit', urn: string, amount: number, reference: string): Expect<{ replayed: boolean, available: number }> {
    if (!safeAmount(amount)) return { err: 'INVALID' }
    const c = this.customers.get(urn)
    if (c === undefined) return { err: 'CUSTOMER_NOT_FOUND' }
    const key = JSON.stringify([urn, kind, reference])
    const prior = this.moneyOp(urn, kind, reference)
    if (prior !== undefined) return prior === amount ? { ok: { replayed: true, available: c.available } } : { err: 'REFERENCE_CONFLICT' }
    if (kind === 'debit' && amount > c.available) return { err: 'INSUFFICIENT_FUNDS' }
    if (kind === 'credit' && c.available + amount > MAX_BALANCE) return { err: 'BALANCE_LIMIT' }
    c.available += kind === 'credit' ? amount : -amount
    this.moneyOps.set(key, { amount, expiresAtMs: this.now() + RETENTION_MS })
    this.moved.set(key, (this.moved.get(key) ?? 0) + amount)
    const hold = /^(transfer|unload):(.*):(hold|release):\d+$/.exec(reference)
    if (hold !== null && (hold[3] === 'hold') === (kind === 'debit')) {
      const h = JSON.stringify([urn, hold[1], hold[2]])
      this.holds.set(h, (this.holds.get(h) ?? 0) + (kind === 'debit' ? amount : -amount))
    }
    return { ok: { replayed: false, available: c.available } }
  }

  putCustomer (urn: string, status: CustomerStatus | undefined): Expect<{ status: CustomerStatus, available: number }> {
    let c = this.customers.get(urn)
    if (c === undefined) this.customers.set(urn, c = this.newCustomer(urn))
    if (status !== undefined) c.status = status
    return { ok: { status: c.status, available: c.available } }
  }

  /** A customer whose every change of balance onBalance hears, wherever it is made. */
  private newCustomer (urn: string): ModelCustomer {
    let available = 0
    const tell = (v: number): void => { this.onBalance?.(urn, v) }
    return {
      status: 'ACTIVE',
      cards: new Map(),
      get available (): number { return available },
      set available (v: number) { available = v; tell(v) }
    }
  }

  putCard (urn: string, last4: string, status: CardStatus): Expect<{ cards: Record<string, CardStatus> }> {
    const c = this.customers.get(urn)
    if (c === undefined) return { err: 'CUSTOMER_NOT_FOUND' }
    c.cards.set(last4, status)
    return { ok: { cards: Object.fromEntries(c.cards) } }
  }

  /** The entries a window must hold at `nowMs`: the approved, unreleased decisions younger than its retention. */
  windowEntries (w: string, retainMs: number, nowMs: number): WindowEntry[] {
    return (this.windows.get(w) ?? []).filter((e) => e.atMs >= nowMs - retainMs)
  }

  /** What credits or debits with this reference ever moved for the customer (0 if none). */
  /** the net debit of every reference of a held move (`<kind>:<id>:hold:<n>` less `<kind>:<id>:release:<n>`) */
  heldNet (urn: string, kind: 'transfer' | 'unload', id: string): number {
    return this.holds.get(JSON.stringify([urn, kind, id])) ?? 0
  }

  movedBy (urn: string, kind: 'credit' | 'debit', reference: string): number {
    return this.moved.get(JSON.stringify([urn, kind, reference])) ?? 0
  }
}
