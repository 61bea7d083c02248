// The embedded store for `npm start` without Redis: the same semantics as the Redis scripts, in one
// process. Each method runs to completion without awaiting in between, which makes it atomic.
import { ERR_STORE_NOT_DONE, reject } from '../errors.js'
import type { ResponseCode } from '../decision/request.js'
import { Keys, limitMember } from './keys.js'
import { MAX_BALANCE, assertAmount, normalizeRecord } from './record.js'
import type { ControlEntries, ControlHit, ControlsInput } from '../controls/types.js'
import { defaultArgs, entriesFromFields, patchToFields } from './control-fields.js'
import {
  CONTROL_DAILY_RETAIN_MS, DECISION_RETENTION_MS_DEFAULT, DECISION_STREAM_MAXLEN, LIFECYCLE_TTL_SECONDS, decisionTtlMs, type LifecycleKind, type AbandonInput, type AbandonOutcome, type AuthorizeInput,
  type AuthorizeResult, type CardStatus, type Customer, type CustomerStatus, type DecisionReason,
  type DecisionRecord, type MoneyOpResult, type ReversalResult, type Store
} from './types.js'

interface CustomerState { customerId: string | null, status: CustomerStatus, available: number, cards: Map<string, CardStatus> }
interface Expiring<T> { value: T, expiresAtMs: number }
export interface MemoryStoreOptions {
  clock?: () => number
  streamMaxLen?: number
  /** DECISION_RETENTION_DAYS in ms */
  retentionMs?: number
}
interface WindowEntry { score: number, member: string }
interface StoredRecord extends DecisionRecord { reversalRequested: string | null }

export class MemoryStore implements Store {
  readonly kind = 'memory' as const
  private readonly clock: () => number
  private readonly keys = new Keys('')
  private readonly customers = new Map<string, CustomerState>()
  private readonly decisions = new Map<string, Expiring<StoredRecord>>()
  private readonly moneyOps = new Map<string, Expiring<number>>()
  private readonly windows = new Map<string, WindowEntry[]>()
  private readonly streams = new Map<string, Array<Record<string, string>>>()
  private readonly lifecycle = new Map<string, Expiring<string>>()
  /** the cards' own control settings: key -> (`kind|field` -> value), as the Redis hash */
  private readonly controlSettings = new Map<string, Map<string, string>>()
  /** the card controls' daily totals */
  private readonly dailyTotals = new Map<string, Expiring<number>>()
  private readonly streamMaxLen: number
  private readonly retentionMs: number
  private streamSeq = 0
  private closed = false

  constructor (opts: MemoryStoreOptions = {}) {
    this.clock = opts.clock ?? Date.now
    this.streamMaxLen = opts.streamMaxLen ?? DECISION_STREAM_MAXLEN
    this.retentionMs = opts.retentionMs ?? DECISION_RETENTION_MS_DEFAULT
  }

  private getRecord (key: string): StoredRecord | undefined {
    const e = this.decisions.get(key)
    if (e === undefined) return undefined
    if (e.expiresAtMs <= this.clock()) {
      this.decisions.delete(key)
      return undefined
    }
    return e.value
  }

  /** `ttlMs` null keeps the record's expiry */
  private putRecord (key: string, rec: StoredRecord, ttlMs: number | null): void {
    const prev = this.decisions.get(key)
    const expiresAtMs = ttlMs === null && prev !== undefined ? prev.expiresAtMs : this.clock() + (ttlMs ?? this.retentionMs)
    // stored as a copy so a caller holding the record cannot change the store
    this.decisions.set(key, { value: structuredClone(rec), expiresAtMs })
  }

  private xadd (urn: string, fields: Record<string, string>): void {
    const key = this.keys.stream(urn)
    let s = this.streams.get(key)
    if (s === undefined) this.streams.set(key, s = [])
    s.push({ id: `${this.clock()}-${this.streamSeq++}`, ...fields })
    if (s.length > this.streamMaxLen) s.splice(0, s.length - this.streamMaxLen)
  }

  private window (key: string, startMs: number): WindowEntry[] {
    return (this.windows.get(key) ?? []).filter((e) => e.score >= startMs)
  }

  async authorize (input: AuthorizeInput): Promise<AuthorizeResult> {
    this.assertOpen()
    assertAmount(input.debitAmount, 'debitAmount', { zero: true })
    const { urn, reference, last4 } = input
    const decisionKey = this.keys.decision(urn, reference)
    const existing = this.getRecord(decisionKey)
    if (existing !== undefined) {
      if (existing.fingerprint !== input.fingerprint) {
        this.xadd(urn, { type: 'conflict', urn, ref: reference, code: '05' })
        return { code: '05', reason: 'conflict', ruleId: null, replayed: false, available: null, shadowLimitHits: [] }
      }
      // the replaying attempt owns the decision now (see the authorize script)
      if (existing.attempt !== input.attempt && !existing.answeredOnDeadline) this.putRecord(decisionKey, { ...existing, attempt: input.attempt }, null)
      return { code: existing.code, reason: existing.reason, ruleId: existing.ruleId, replayed: true, available: null, shadowLimitHits: [] }
    }

    const debit = input.debitAmount
    let code: ResponseCode = '00'
    let reason: DecisionReason = 'approved'
    let ruleId: string | null = null
    let controlHit: ControlHit | null = null
    const cust = this.customers.get(urn)
    if (cust === undefined) {
      code = '14'; reason = 'unknown_urn'
    } else if (cust.status === 'BLOCKED') {
      code = '05'; reason = 'customer_blocked'
    } else if (cust.status === 'CLOSED') {
      code = '05'; reason = 'customer_closed'
    } else {
      const card = cust.cards.get(last4)
      if (card === 'LOST') { code = '41'; reason = 'card_lost' } else if (card === 'STOLEN') { code = '43'; reason = 'card_stolen' } else if (card === 'BLOCKED') { code = '05'; reason = 'card_blocked' } else if (card === undefined && cust.cards.size > 0) { code = '14'; reason = 'card_unknown' } else {
        controlHit = this.checkControls(urn, last4, debit, input.controls)
        if (controlHit !== null) {
          code = controlHit.check === 'enabled' ? '05' : '61'
          reason = controlHit.check === 'enabled' ? 'control_off' : 'control_limit'
        } else if (input.decline !== null) { code = input.decline.code; reason = 'rule'; ruleId = input.decline.ruleId }
      }
    }

    const shadowLimitHits: string[] = []
    const limitKeys = input.limits.map((l) => this.keys.limit(urn, last4, l))
    if (code === '00') {
      input.limits.forEach((l, i) => {
        const entries = this.window(limitKeys[i] as string, l.windowStartMs)
        const used = l.measure === 'count'
          ? entries.length + 1
          : entries.reduce((sum, e) => sum + Number(e.member.slice(0, e.member.indexOf('|'))), debit)
        if (used > l.max) {
          if (l.mode === 'shadow') shadowLimitHits.push(l.ruleId)
          else if (code === '00') { code = l.code; reason = 'limit'; ruleId = l.ruleId }
        }
      })
      if (code === '00' && debit > (cust as CustomerState).available) { code = '51'; reason = 'insufficient_funds' }
    }

    const storeNow = this.clock()
    const onDeadline = storeNow > input.deadlineAtMs
    const decidedCode = onDeadline ? code : null
    if (onDeadline) { code = '05'; reason = 'deadline'; ruleId = null; controlHit = null }

    let held = 0
    const limitEntries: Array<[string, string]> = []
    if (code === '00' && cust !== undefined) {
      cust.available -= debit
      held = debit
      const member = limitMember(debit, reference)
      input.limits.forEach((l, i) => {
        const key = limitKeys[i] as string
        const kept = (this.windows.get(key) ?? []).filter((e) => e.score >= input.nowMs - l.retainMs)
        kept.push({ score: input.nowMs, member })
        this.windows.set(key, kept)
        limitEntries.push([key, member])
      })
    }
    const controlEntries: Array<[string, string]> = []
    if (code === '00' && debit > 0 && input.controls !== undefined) {
      for (const d of input.controls.defaults) {
        const key = this.keys.controlDaily(urn, last4, d.kind, input.controls.day)
        const cur = this.dailyTotal(key)
        if (cur === 0 && !this.dailyTotals.has(key)) this.dailyTotals.set(key, { value: debit, expiresAtMs: this.clock() + CONTROL_DAILY_RETAIN_MS })
        else (this.dailyTotals.get(key) as Expiring<number>).value = cur + debit
        controlEntries.push([key, String(debit)])
      }
    }

    this.putRecord(decisionKey, {
      urn, reference, last4, attempt: input.attempt, code, reason, ruleId,
      debit: String(debit), held: String(held), released: '0', fingerprint: input.fingerprint,
      shadowLimitHits, limitEntries, arrivedAtMs: input.nowMs, deadlineAtMs: input.deadlineAtMs, decidedAtMs: storeNow,
      answeredOnDeadline: onDeadline, decidedCode, reversal: null, reversalRequested: null, meta: input.meta,
      controlEntries, control: controlHit
    }, decisionTtlMs(this.retentionMs, input.limits))
    this.xadd(urn, { type: 'decision', urn, ref: reference, code, reason, rule: ruleId ?? '', debit: String(debit), held: String(held) })
    return { code, reason, ruleId, replayed: false, available: cust === undefined ? null : cust.available, shadowLimitHits, ...(controlHit !== null ? { control: controlHit } : {}) }
  }

  async abandon (input: AbandonInput): Promise<AbandonOutcome> {
    this.assertOpen()
    const { urn, reference } = input
    const key = this.keys.decision(urn, reference)
    const rec = this.getRecord(key)
    if (rec === undefined) {
      this.putRecord(key, {
        urn, reference, last4: input.last4, attempt: input.attempt, code: '05', reason: 'deadline', ruleId: null,
        debit: '0', held: '0', released: '0', fingerprint: input.fingerprint, shadowLimitHits: [], limitEntries: [],
        arrivedAtMs: input.arrivedAtMs, deadlineAtMs: input.deadlineAtMs, decidedAtMs: this.clock(),
        answeredOnDeadline: true, decidedCode: null, reversal: null, reversalRequested: null, meta: null,
        controlEntries: [], control: null
      }, this.retentionMs)
      this.xadd(urn, { type: 'abandon', urn, ref: reference, released: '0' })
      return 'tombstoned'
    }
    if (rec.attempt !== input.attempt || rec.answeredOnDeadline) return 'untouched'
    const held = Number(rec.held)
    const cust = this.customers.get(urn)
    if (held > 0 && cust !== undefined) cust.available += held
    for (const [wkey, member] of rec.limitEntries) this.removeEntry(wkey, member)
    for (const [dkey, amount] of rec.controlEntries) this.giveBackDaily(dkey, Number(amount))
    this.putRecord(key, {
      ...rec, decidedCode: rec.code, code: '05', reason: 'deadline', ruleId: null, answeredOnDeadline: true,
      released: String(Number(rec.released) + held), held: '0', limitEntries: [], controlEntries: []
    }, null)
    this.xadd(urn, { type: 'abandon', urn, ref: reference, released: String(held) })
    return 'released'
  }

  private dailyTotal (key: string): number {
    const e = this.dailyTotals.get(key)
    if (e === undefined) return 0
    if (e.expiresAtMs <= this.clock()) {
      this.dailyTotals.delete(key)
      return 0
    }
    return e.value
  }

  /** as the scripts' giveBackDaily: a total back at zero is removed; one expired stays gone */
  private giveBackDaily (key: string, amount: number): void {
    const cur = this.dailyTotal(key)
    if (cur <= 0) return
    if (cur - amount <= 0) this.dailyTotals.delete(key)
    else (this.dailyTotals.get(key) as Expiring<number>).value = cur - amount
  }

  /** the first control that declines (every off control before any limit), as the authorize script */
  private checkControls (urn: string, last4: string, debit: number, controls: ControlsInput | undefined): ControlHit | null {
    if (controls === undefined || controls.defaults.length === 0) return null
    const own = this.controlSettings.get(this.keys.cardControls(urn, last4))
    const ctl = controls.defaults.map((d) => {
      const [kind, enabled, per, daily] = defaultArgs(d)
      const pick = (field: string, def: string): string => own?.get(`${kind}|${field}`) ?? def
      return { kind: d.kind, enabled: pick('enabled', enabled), per: pick('perTransactionMax', per), daily: pick('dailyMax', daily) }
    })
    for (const c of ctl) {
      if (c.enabled !== '1') return { control: c.kind, check: 'enabled', debit }
    }
    for (const c of ctl) {
      if (c.per !== '' && debit > Number(c.per)) return { control: c.kind, check: 'perTransactionMax', limit: Number(c.per), debit }
      if (c.daily !== '') {
        const before = this.dailyTotal(this.keys.controlDaily(urn, last4, c.kind, controls.day))
        if (before + debit > Number(c.daily)) return { control: c.kind, check: 'dailyMax', limit: Number(c.daily), totalBefore: before, debit }
      }
    }
    return null
  }

  private cardControlsOf (urn: string, last4: string): Map<string, string> {
    const c = this.customers.get(urn)
    if (c === undefined) reject('CUSTOMER_NOT_FOUND')
    if (!c.cards.has(last4)) reject('CARD_NOT_FOUND')
    const key = this.keys.cardControls(urn, last4)
    let m = this.controlSettings.get(key)
    if (m === undefined) this.controlSettings.set(key, m = new Map())
    return m
  }

  async getCardControls (urn: string, last4: string): Promise<ControlEntries> {
    this.assertOpen()
    return entriesFromFields(Object.fromEntries(this.cardControlsOf(urn, last4)))
  }

  async patchCardControls (urn: string, last4: string, patch: ControlEntries): Promise<{ before: ControlEntries, after: ControlEntries }> {
    this.assertOpen()
    const m = this.cardControlsOf(urn, last4)
    const before = entriesFromFields(Object.fromEntries(m))
    for (const [field, value] of patchToFields(patch)) m.set(field, value)
    return { before, after: entriesFromFields(Object.fromEntries(m)) }
  }

  private removeEntry (key: string, member: string): WindowEntry | undefined {
    const list = this.windows.get(key)
    if (list === undefined) return undefined
    const i = list.findIndex((e) => e.member === member)
    if (i < 0) return undefined
    return list.splice(i, 1)[0]
  }

  async putCustomer (urn: string, patch: { customerId?: string, status?: CustomerStatus }): Promise<Customer> {
    this.assertOpen()
    let c = this.customers.get(urn)
    if (c === undefined) this.customers.set(urn, c = { customerId: null, status: 'ACTIVE', available: 0, cards: new Map() })
    if (patch.status !== undefined) c.status = patch.status
    if (patch.customerId !== undefined) c.customerId = patch.customerId
    return this.view(urn, c)
  }

  async putCard (urn: string, last4: string, status: CardStatus): Promise<Customer> {
    this.assertOpen()
    const c = this.customers.get(urn)
    if (c === undefined) reject('CUSTOMER_NOT_FOUND')
    c.cards.set(last4, status)
    return this.view(urn, c)
  }

  async getCustomer (urn: string): Promise<Customer | null> {
    this.assertOpen()
    const c = this.customers.get(urn)
    return c === undefined ? null : this.view(urn, c)
  }

  private view (urn: string, c: CustomerState): Customer {
    return { urn, customerId: c.customerId, status: c.status, available: c.available, cards: Object.fromEntries(c.cards) }
  }

  private moneyOp (kind: 'credit' | 'debit', urn: string, amount: number, reference: string): MoneyOpResult {
    this.assertOpen()
    assertAmount(amount, kind)
    const c = this.customers.get(urn)
    if (c === undefined) reject('CUSTOMER_NOT_FOUND')
    const key = this.keys.moneyOp(urn, kind, reference)
    const kept = this.moneyOps.get(key)
    const prior = kept !== undefined && kept.expiresAtMs > this.clock() ? kept.value : undefined
    if (prior !== undefined) {
      if (prior === amount) return { replayed: true, available: c.available }
      reject('REFERENCE_CONFLICT')
    }
    if (kind === 'debit' && amount > c.available) reject('INSUFFICIENT_FUNDS')
    if (kind === 'credit' && c.available + amount > MAX_BALANCE) reject('BALANCE_LIMIT')
    c.available += kind === 'debit' ? -amount : amount
    this.moneyOps.set(key, { value: amount, expiresAtMs: this.clock() + this.retentionMs })
    this.xadd(urn, { type: kind, urn, ref: reference, amount: String(amount) })
    return { replayed: false, available: c.available }
  }

  async credit (urn: string, amount: number, reference: string): Promise<MoneyOpResult> {
    return this.moneyOp('credit', urn, amount, reference)
  }

  async debit (urn: string, amount: number, reference: string): Promise<MoneyOpResult> {
    return this.moneyOp('debit', urn, amount, reference)
  }

  async getDecision (urn: string, reference: string): Promise<DecisionRecord | null> {
    this.assertOpen()
    const key = this.keys.decision(urn, reference)
    const rec = this.getRecord(key)
    if (rec === undefined) return null
    const { reversalRequested: _, ...pub } = structuredClone(rec)
    return { ...normalizeRecord(pub as unknown as Record<string, unknown>), expiresAtMs: this.decisions.get(key)?.expiresAtMs ?? null }
  }

  async reverse (urn: string, reference: string, amount: number | null): Promise<ReversalResult> {
    this.assertOpen()
    if (amount !== null) assertAmount(amount, 'reversal amount')
    const key = this.keys.decision(urn, reference)
    const rec = this.getRecord(key)
    if (rec === undefined) reject('DECISION_NOT_FOUND')
    const requested = amount === null ? '' : String(amount)
    const cust = this.customers.get(urn)
    if (rec.reversal !== null) {
      if (rec.reversalRequested === requested) return { replayed: true, released: Number(rec.reversal.amount), available: cust?.available ?? 0 }
      reject('ALREADY_REVERSED')
    }
    if (rec.code !== '00') reject('NOT_APPROVED')
    const held = Number(rec.held)
    const amt = amount ?? held
    if (amt > held) reject('EXCEEDS_HOLD')
    if (cust !== undefined) cust.available += amt
    const left = held - amt
    const kept: Array<[string, string]> = []
    for (const [wkey, member] of rec.limitEntries) {
      const removed = this.removeEntry(wkey, member)
      if (left > 0 && removed !== undefined) {
        const m = limitMember(left, reference)
        this.windows.get(wkey)?.push({ score: removed.score, member: m })
        kept.push([wkey, m])
      }
    }
    const keptControls: Array<[string, string]> = []
    for (const [dkey] of rec.controlEntries) {
      this.giveBackDaily(dkey, amt)
      if (left > 0) keptControls.push([dkey, String(left)])
    }
    this.putRecord(key, {
      ...rec, limitEntries: kept, controlEntries: keptControls, held: String(left), released: String(Number(rec.released) + amt),
      reversal: { amount: String(amt), atMs: this.clock() }, reversalRequested: requested
    }, null)
    this.xadd(urn, { type: 'reversal', urn, ref: reference, released: String(amt) })
    return { replayed: false, released: amt, available: cust?.available ?? 0 }
  }

  async readDecisionStream (urn: string, count = 10000): Promise<Array<Record<string, string>>> {
    return (this.streams.get(this.keys.stream(urn)) ?? []).slice(0, count).map((e) => ({ ...e }))
  }

  private live (key: string): Expiring<string> | undefined {
    const e = this.lifecycle.get(key)
    if (e !== undefined && e.expiresAtMs <= this.clock()) {
      this.lifecycle.delete(key)
      return undefined
    }
    return e
  }

  async createLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<{ created: boolean, value: T }> {
    this.assertOpen()
    const key = this.keys.lifecycle(kind, id)
    const e = this.live(key)
    if (e !== undefined) return { created: false, value: JSON.parse(e.value) as T }
    this.lifecycle.set(key, { value: JSON.stringify(value), expiresAtMs: this.clock() + LIFECYCLE_TTL_SECONDS * 1000 })
    return { created: true, value }
  }

  async getLifecycle<T extends object> (kind: LifecycleKind, id: string): Promise<T | null> {
    this.assertOpen()
    const e = this.live(this.keys.lifecycle(kind, id))
    return e === undefined ? null : JSON.parse(e.value) as T
  }

  async putLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<void> {
    this.assertOpen()
    this.lifecycle.set(this.keys.lifecycle(kind, id), { value: JSON.stringify(value), expiresAtMs: this.clock() + LIFECYCLE_TTL_SECONDS * 1000 })
  }

  async lockLifecycle (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    this.assertOpen()
    const key = this.keys.lifecycleLock(kind, id)
    if (this.live(key) !== undefined) return false
    this.lifecycle.set(key, { value: owner, expiresAtMs: this.clock() + ttlMs })
    return true
  }

  async unlockLifecycle (kind: LifecycleKind, id: string, owner: string): Promise<boolean> {
    const key = this.keys.lifecycleLock(kind, id)
    if (this.live(key)?.value !== owner) return false
    this.lifecycle.delete(key)
    return true
  }

  ready (): boolean {
    return !this.closed
  }

  async ping (): Promise<void> {
    this.assertOpen()
  }

  async close (): Promise<void> {
    this.closed = true
  }

  private assertOpen (): void {
    if (this.closed) throw new ERR_STORE_NOT_DONE('the store is closed')
  }
}
