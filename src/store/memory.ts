// The embedded store for `npm start` without Redis: the same semantics as the Redis scripts, in one
// process. Each method runs to completion without awaiting in between, which makes it atomic.
import { alreadyReversed, insufficientFunds } from './rejections.js'
import { ERR_STORE_NOT_DONE, LifecycleStale, reject } from '../errors.js'
import type { ResponseCode } from '../domain/request.js'
import { Keys, bucketOf, limitMember, part } from './keys.js'
import { WindowTotals } from './limit-totals.js'
import { flatEvent } from './outbox-entry.js'
import { HoldIndex } from './hold-index.js'
import { holdTtlMs } from './hold-ttl.js'
import { MAX_BALANCE, assertAmount, createdEventOf, deadlineRecord, normalizeRecord } from './record.js'
import type { ControlEntries, ControlHit, ControlsInput } from '../domain/controls.js'
import { AUDIT_EVENT_TYPE, type AuditContext, type AuditRecord } from '../domain/audit.js'
import { defaultArgs, entriesFromFields, patchToFields } from './control-fields.js'
import {
  AUDIT_RETENTION_MS_DEFAULT, auditUrnOf, CONTROL_DAILY_RETAIN_MS, DECISION_RETENTION_MS_DEFAULT, EVENTS_BACKLOG_MAX_DEFAULT, backlogPerBucket, type MoneyEvent, type MoneyOpKind, LIFECYCLE_TTL_SECONDS, LIFECYCLE_INDEX_MAX, lifecycleRefOf, lifecycleUrnsOf, type LifecycleRef, decisionTtlMs, type LifecycleKind, type AbandonInput, type AbandonOutcome, type AuthorizeInput,
  type AuthorizeResult, type CardStatus, type Customer, type CustomerStatus, type DecisionReason,
  type DecisionRecord, type MoneyOpResult, type ReversalResult, type Store
} from './types.js'

interface CustomerState { customerId: string | null, status: CustomerStatus, available: number, held: number, cards: Map<string, CardStatus> }
interface Expiring<T> { value: T, expiresAtMs: number }
export interface MemoryStoreOptions {
  clock?: () => number
  /** EVENTS_BACKLOG_MAX */
  backlogMax?: number
  /** DECISION_RETENTION_DAYS in ms */
  retentionMs?: number
  /** AUDIT_RETENTION_DAYS in ms */
  auditRetentionMs?: number
}
interface WindowEntry { score: number, member: string }
interface StoredRecord extends DecisionRecord { reversalRequested: string | null }

export class MemoryStore implements Store {
  readonly kind = 'memory' as const
  private readonly clock: () => number
  private readonly keys = new Keys('')
  private readonly customers = new Map<string, CustomerState>()
  private readonly decisions = new Map<string, Expiring<StoredRecord>>()
  /** reference -> the keys of its decisions (all customers'), as the Redis store's reference index */
  private readonly byReference = new Map<string, Set<string>>()
  private readonly moneyOps = new Map<string, Expiring<number>>()
  private readonly windows = new Map<string, WindowEntry[]>()
  /** each window's running totals, kept with every change of its entries (as the '<window>:t' hash in Redis) */
  private readonly windowTotals = new Map<string, WindowTotals>()
  /** the outbox, by bucket */
  private readonly streams = new Map<number, Array<{ id: string, fields: Record<string, string> }>>()
  private lastStreamMs = 0
  private droppedEvents = 0
  /** called with the bucket of every event written (the relay's hint) */
  onEvent: ((bucket: number) => void) | null = null
  private readonly lifecycle = new Map<string, Expiring<string>>()
  /** each customer's lifecycle records: `<kind>:<id>` -> first save (ms), in that order; see LIFECYCLE_INDEX_MAX */
  private readonly lifecycleIndex = new Map<string, { entries: Map<string, number>, expiresAtMs: number }>()
  /** the cards' own control settings: key -> (`kind|field` -> value), as the Redis hash */
  private readonly controlSettings = new Map<string, Map<string, string>>()
  /** the card controls' daily totals */
  private readonly dailyTotals = new Map<string, Expiring<number>>()
  private readonly streamMaxLen: number
  private readonly retentionMs: number
  private readonly auditRetentionMs: number
  /** the audit records, oldest first (the Redis store keeps them per bucket) */
  private auditLog: AuditRecord[] = []
  private streamSeq = 0
  private closed = false
  /** the open holds of SETTLEMENT_MODE=holds by expiry (the Redis store's '<stream>:h'; src/settlement/) */
  readonly holds = new HoldIndex()
  /** the hold index's member of a decision: its key's tail and the card, as the scripts write it */
  holdMember (decisionKey: string, last4: string): string {
    return `${decisionKey.slice(decisionKey.indexOf('}:d:') + 4)}:${part(last4)}`
  }

  /**
   * as the authorize script: a hold the index still has for a new decision's member is one whose decision is
   * gone (else it were a replay); it is released as expiry releases such a hold, before the new decision may
   * take its member
   */
  private releaseStaleHold (urn: string, reference: string, last4: string, decisionKey: string, cust: CustomerState | undefined): void {
    const member = this.holdMember(decisionKey, last4)
    if (!this.holds.has(member)) return
    const amt = this.holds.amountOf(member)
    this.holds.remove(member)
    if (amt <= 0 || cust === undefined) return
    cust.held -= amt
    cust.available += amt
    this.emit(urn, 'authorization.expired', { reference, last4, released: String(amt), available: String(cust.available), held: String(cust.held) })
  }

  /** as the scripts' holdRelease: a release of what a hold holds also lowers `held`; emptied, it leaves the index */
  private holdRelease (key: string, last4: string, cust: CustomerState | undefined, amt: number, left: number): void {
    const member = this.holdMember(key, last4)
    if (!this.holds.has(member)) return
    if (cust !== undefined) cust.held -= amt
    if (left <= 0) this.holds.remove(member)
    else this.holds.setAmount(member, left)
  }

  constructor (opts: MemoryStoreOptions = {}) {
    this.clock = opts.clock ?? Date.now
    this.streamMaxLen = backlogPerBucket(opts.backlogMax ?? EVENTS_BACKLOG_MAX_DEFAULT)
    this.retentionMs = opts.retentionMs ?? DECISION_RETENTION_MS_DEFAULT
    this.auditRetentionMs = opts.auditRetentionMs ?? AUDIT_RETENTION_MS_DEFAULT
  }

  /** as the scripts' writeAudit: the record and its event, in the step of the change; past the retention the oldest go */
  private writeAudit (record: Omit<AuditRecord, 'atMs'>): AuditRecord {
    const atMs = this.clock()
    const rec = structuredClone({ ...record, atMs })
    this.auditLog = this.auditLog.filter((r) => r.atMs >= atMs - this.auditRetentionMs)
    this.auditLog.push(rec)
    this.emit(auditUrnOf(rec), AUDIT_EVENT_TYPE, rec as unknown as Record<string, unknown>, undefined, rec.target.urn ?? '')
    return rec
  }

  private audit (ctx: AuditContext | undefined, before: Record<string, unknown> | null, after: Record<string, unknown> | null): void {
    if (ctx !== undefined) this.writeAudit({ ...ctx, outcome: 'done', before, after })
  }

  /** every audit record kept (the embedded store's audit trail) */
  auditRecords (): readonly AuditRecord[] {
    const from = this.clock() - this.auditRetentionMs
    return this.auditLog.filter((r) => r.atMs >= from)
  }

  async appendAudit (record: Omit<AuditRecord, 'atMs'>): Promise<AuditRecord> {
    this.assertOpen()
    return this.writeAudit(record)
  }

  private getRecord (key: string): StoredRecord | undefined {
    const e = this.decisions.get(key)
    if (e === undefined) return undefined
    if (e.expiresAtMs <= this.clock()) {
      this.decisions.delete(key)
      const same = this.byReference.get(e.value.reference)
      same?.delete(key)
      if (same?.size === 0) this.byReference.delete(e.value.reference)
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
    let same = this.byReference.get(rec.reference)
    if (same === undefined) this.byReference.set(rec.reference, same = new Set())
    same.add(key)
  }

  /** as the scripts' emit: the event goes to the bucket's outbox with the change; past the bound the oldest go */
  private emit (urn: string, type: string, data: Record<string, unknown>, extra?: string, eventUrn = urn): void {
    const bucket = bucketOf(urn)
    let s = this.streams.get(bucket)
    if (s === undefined) this.streams.set(bucket, s = [])
    const ms = this.clock()
    if (ms > this.lastStreamMs) { this.lastStreamMs = ms; this.streamSeq = 0 }
    const fields: Record<string, string> = { t: type, u: eventUrn, d: JSON.stringify(data) }
    if (extra !== undefined && extra !== '') fields.x = extra
    s.push({ id: `${this.lastStreamMs}-${this.streamSeq++}`, fields })
    if (s.length > this.streamMaxLen) this.droppedEvents += s.splice(0, s.length - this.streamMaxLen).length
    this.onEvent?.(bucket)
  }

  /** The outbox of one bucket, oldest first (the memory relay reads and trims it). */
  outboxEntries (bucket: number): ReadonlyArray<{ id: string, fields: Record<string, string> }> {
    return this.streams.get(bucket) ?? []
  }

  /** Removes the entries before `index` of a bucket's outbox (delivered or parked). */
  trimOutbox (bucket: number, count: number): void {
    this.streams.get(bucket)?.splice(0, count)
  }

  outboxBuckets (): number[] {
    return [...this.streams.entries()].filter(([, s]) => s.length > 0).map(([b]) => b)
  }

  get outboxDropped (): number {
    return this.droppedEvents
  }

  private totalsOf (key: string): WindowTotals {
    let t = this.windowTotals.get(key)
    if (t === undefined) this.windowTotals.set(key, t = new WindowTotals())
    return t
  }

  /** How many entries, and their amount, the window holds from startMs on (the amount from its totals). */
  private windowUse (key: string, startMs: number, measure: 'count' | 'amount'): number {
    const list = this.windows.get(key) ?? []
    if (measure === 'count') return list.filter((e) => e.score >= startMs).length
    const first = list.reduce((m, e) => Math.min(m, e.score), Infinity)
    const last = list.reduce((m, e) => Math.max(m, e.score), -Infinity)
    return this.totalsOf(key).amountFrom(startMs, first, last, (from, to) =>
      list.reduce((sum, e) => e.score >= from && e.score < to ? sum + memberAmount(e.member) : sum, 0))
  }

  private windowAdd (key: string, entry: WindowEntry): void {
    let list = this.windows.get(key)
    if (list === undefined) this.windows.set(key, list = [])
    list.push(entry)
    this.totalsOf(key).add(entry.score, memberAmount(entry.member))
  }

  async authorize (input: AuthorizeInput): Promise<AuthorizeResult> {
    this.assertOpen()
    assertAmount(input.debitAmount, 'debitAmount', { zero: true })
    const { urn, reference, last4 } = input
    const decisionKey = this.keys.decision(urn, reference)
    const existing = this.getRecord(decisionKey)
    if (existing !== undefined) {
      if (existing.fingerprint !== input.fingerprint) {
        return { code: '05', reason: 'conflict', ruleId: null, replayed: false, available: null, shadowLimitHits: [] }
      }
      // the replaying attempt owns the decision now (see the authorize script)
      if (existing.attempt !== input.attempt && !existing.answeredOnDeadline && input.nowMs >= (existing.attemptArrivedAtMs ?? existing.arrivedAtMs)) {
        this.putRecord(decisionKey, { ...existing, attempt: input.attempt, attemptArrivedAtMs: input.nowMs }, null)
      }
      return { code: existing.code, reason: existing.reason, ruleId: existing.ruleId, replayed: true, available: null, shadowLimitHits: [] }
    }

    const debit = input.debitAmount
    let code: ResponseCode = '00'
    let reason: DecisionReason = 'approved'
    let ruleId: string | null = null
    let controlHit: ControlHit | null = null
    const cust = this.customers.get(urn)
    // what the decision saw, for the journal (as the authorize script keeps it)
    const seen: Pick<DecisionRecord, 'customerStatus' | 'cardStatus' | 'availableSeen' | 'limitSeen' | 'controlsSeen'> = {
      customerStatus: cust?.status ?? null, cardStatus: null, availableSeen: null, limitSeen: null, controlsSeen: null
    }
    if (input.standIn === true) {
      // the replay of a stand-in approval (see the authorize script): recorded, not checked
      seen.cardStatus = cust?.cards.get(last4) ?? null
    } else if (cust === undefined) {
      code = '14'; reason = 'unknown_urn'
    } else if (cust.status === 'BLOCKED') {
      code = '05'; reason = 'customer_blocked'
    } else if (cust.status === 'CLOSED') {
      code = '05'; reason = 'customer_closed'
    } else {
      const card = cust.cards.get(last4)
      seen.cardStatus = card ?? null
      if (card === 'LOST') { code = '41'; reason = 'card_lost' } else if (card === 'STOLEN') { code = '43'; reason = 'card_stolen' } else if (card === 'BLOCKED') { code = '05'; reason = 'card_blocked' } else if (card === undefined && cust.cards.size > 0) { code = '14'; reason = 'card_unknown' } else {
        controlHit = this.checkControls(urn, last4, debit, input.controls, seen)
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
        const used = this.windowUse(limitKeys[i] as string, l.windowStartMs, l.measure) + (l.measure === 'count' ? 1 : debit)
        if (used > l.max && input.standIn !== true) {
          if (l.mode === 'shadow') shadowLimitHits.push(l.ruleId)
          else if (code === '00') {
            code = l.code; reason = 'limit'; ruleId = l.ruleId
            seen.limitSeen = { ruleId: l.ruleId, usedBefore: String(used - (l.measure === 'count' ? 1 : debit)), max: String(l.max) }
          }
        }
      })
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a limit in the forEach callback above may have changed it; the type checker's narrowing does not see that
      if (code === '00' && input.standIn !== true && cust !== undefined && debit > cust.available) { code = '51'; reason = 'insufficient_funds'; seen.availableSeen = String((cust as CustomerState).available) }
    }

    const storeNow = this.clock()
    const onDeadline = storeNow > input.deadlineAtMs && input.standIn !== true
    const decidedCode = onDeadline ? code : null
    if (onDeadline) { code = '05'; reason = 'deadline'; ruleId = null; controlHit = null }

    this.releaseStaleHold(urn, reference, last4, decisionKey, cust)
    let held = 0
    const limitEntries: Array<[string, string]> = []
    if (code === '00' && cust !== undefined) {
      cust.available -= debit
      held = debit
      if (debit > 0 && input.holdExpiresAtMs !== undefined) {
        cust.held += debit
        this.holds.add(this.holdMember(decisionKey, last4), input.holdExpiresAtMs, debit, storeNow)
      }
      const member = limitMember(debit, reference)
      input.limits.forEach((l, i) => {
        const key = limitKeys[i] as string
        const cut = input.nowMs - l.retainMs
        for (const e of (this.windows.get(key) ?? []).filter((e) => e.score < cut)) this.removeEntry(key, e.member)
        this.windowAdd(key, { score: input.nowMs, member })
        limitEntries.push([key, member])
      })
    }
    const controlEntries: Array<[string, string]> = []
    if (code === '00' && cust !== undefined && debit > 0 && input.controls !== undefined) {
      for (const d of input.controls.defaults) {
        const key = this.keys.controlDaily(urn, last4, d.kind, input.controls.day)
        const cur = this.dailyTotal(key)
        if (cur === 0 && !this.dailyTotals.has(key)) this.dailyTotals.set(key, { value: debit, expiresAtMs: this.clock() + CONTROL_DAILY_RETAIN_MS })
        else (this.dailyTotals.get(key) as Expiring<number>).value = cur + debit
        controlEntries.push([key, String(debit)])
      }
    }

    const rec: StoredRecord = {
      ...deadlineRecord({
        urn, reference, last4, attempt: input.attempt, fingerprint: input.fingerprint,
        arrivedAtMs: input.nowMs, deadlineAtMs: input.deadlineAtMs, decidedAtMs: storeNow
      }),
      code, reason, ruleId, debit: String(debit), held: String(held), shadowLimitHits, limitEntries,
      answeredOnDeadline: onDeadline, decidedCode, meta: input.meta, controlEntries, control: controlHit, ...seen,
      reversalRequested: null
    }
    this.putRecord(decisionKey, rec, holdTtlMs(decisionTtlMs(this.retentionMs, input.limits), held > 0 ? input : {}))
    this.emit(urn, 'decision.created', createdEventOf(rec, cust === undefined ? null : String(cust.available)), JSON.stringify(input.meta))
    return { code, reason, ruleId, replayed: false, available: cust === undefined ? null : cust.available, shadowLimitHits, ...(controlHit !== null ? { control: controlHit } : {}) }
  }

  async abandon (input: AbandonInput): Promise<AbandonOutcome> {
    this.assertOpen()
    const { urn, reference } = input
    const key = this.keys.decision(urn, reference)
    const rec = this.getRecord(key)
    if (rec === undefined) {
      if (input.tombstone === false) return 'untouched'
      const tombstone: StoredRecord = {
        ...deadlineRecord({
          urn, reference, last4: input.last4, attempt: input.attempt, fingerprint: input.fingerprint,
          arrivedAtMs: input.arrivedAtMs, deadlineAtMs: input.deadlineAtMs, decidedAtMs: this.clock()
        }),
        reversalRequested: null
      }
      this.putRecord(key, tombstone, this.retentionMs)
      this.emit(urn, 'decision.created', createdEventOf(tombstone, null))
      return 'tombstoned'
    }
    if (rec.answeredOnDeadline) return 'untouched'
    // a later attempt answered 05 owns the decision (see the abandon script)
    if (rec.attempt !== input.attempt && (rec.fingerprint !== input.fingerprint || input.arrivedAtMs <= (rec.attemptArrivedAtMs ?? rec.arrivedAtMs))) return 'untouched'
    const held = Number(rec.held)
    const cust = this.customers.get(urn)
    if (held > 0 && cust !== undefined) cust.available += held
    this.holdRelease(key, rec.last4, cust, held, 0)
    for (const [wkey, member] of rec.limitEntries) this.removeEntry(wkey, member)
    for (const [dkey, amount] of rec.controlEntries) this.giveBackDaily(dkey, Number(amount))
    this.putRecord(key, {
      ...rec, attempt: input.attempt, attemptArrivedAtMs: input.arrivedAtMs, decidedCode: rec.code, code: '05', reason: 'deadline', ruleId: null, answeredOnDeadline: true,
      released: String(Number(rec.released) + held), held: '0', limitEntries: [], controlEntries: []
    }, null)
    this.emit(urn, 'decision.released', { reference, last4: rec.last4, decidedCode: rec.code, released: String(held), available: String(cust?.available ?? 0) })
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
  private checkControls (urn: string, last4: string, debit: number, controls: ControlsInput | undefined, seen: Pick<DecisionRecord, 'controlsSeen'>): ControlHit | null {
    if (controls === undefined || controls.defaults.length === 0) return null
    const own = this.controlSettings.get(this.keys.cardControls(urn, last4))
    const ctl = controls.defaults.map((d) => {
      const [kind, enabled, per, daily] = defaultArgs(d)
      const pick = (field: string, def: string): string => own?.get(`${kind}|${field}`) ?? def
      return { kind: d.kind, enabled: pick('enabled', enabled), per: pick('perTransactionMax', per), daily: pick('dailyMax', daily) }
    })
    seen.controlsSeen = Object.fromEntries(ctl.map((c) => [c.kind, { e: c.enabled, p: c.per, d: c.daily }]))
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
    if (m === undefined) this.controlSettings.set(key, m = new Map<string, string>())
    return m
  }

  async getCardControls (urn: string, last4: string): Promise<ControlEntries> {
    this.assertOpen()
    return entriesFromFields(Object.fromEntries(this.cardControlsOf(urn, last4)))
  }

  async patchCardControls (urn: string, last4: string, patch: ControlEntries, audit?: AuditContext): Promise<{ before: ControlEntries, after: ControlEntries }> {
    this.assertOpen()
    const m = this.cardControlsOf(urn, last4)
    const beforeFields = Object.fromEntries(m)
    const before = entriesFromFields(beforeFields)
    const fields = patchToFields(patch)
    for (const [field, value] of fields) m.set(field, value)
    const afterFields = Object.fromEntries(m)
    if (fields.length > 0) {
      this.emit(urn, 'card.controls.updated', { last4, before: Object.entries(beforeFields).flat(), after: Object.entries(afterFields).flat() })
      this.audit(audit, beforeFields, afterFields)
    }
    return { before, after: entriesFromFields(afterFields) }
  }

  private removeEntry (key: string, member: string): WindowEntry | undefined {
    const list = this.windows.get(key)
    if (list === undefined) return undefined
    const i = list.findIndex((e) => e.member === member)
    if (i < 0) return undefined
    const [removed] = list.splice(i, 1) as [WindowEntry]
    if (list.length === 0) {
      this.windows.delete(key)
      this.windowTotals.delete(key)
    } else {
      this.totalsOf(key).add(removed.score, -memberAmount(removed.member))
    }
    return removed
  }

  async putCustomer (urn: string, patch: { customerId?: string, status?: CustomerStatus }, audit?: AuditContext): Promise<Customer> {
    this.assertOpen()
    let c = this.customers.get(urn)
    const created = c === undefined
    const before = c === undefined ? null : { status: c.status, customerId: c.customerId, available: String(c.available) }
    if (c === undefined) this.customers.set(urn, c = { customerId: null, status: 'ACTIVE', available: 0, held: 0, cards: new Map() })
    if (patch.status !== undefined) c.status = patch.status
    if (patch.customerId !== undefined) c.customerId = patch.customerId
    this.emit(urn, 'customer.updated', { created, status: c.status, customerId: c.customerId, available: String(c.available) })
    this.audit(audit, before, { status: c.status, customerId: c.customerId, available: String(c.available) })
    return this.view(urn, c)
  }

  async putCard (urn: string, last4: string, status: CardStatus, audit?: AuditContext): Promise<Customer> {
    this.assertOpen()
    const c = this.customers.get(urn)
    if (c === undefined) reject('CUSTOMER_NOT_FOUND')
    const previous = c.cards.get(last4) ?? null
    c.cards.set(last4, status)
    this.emit(urn, 'card.updated', { last4, status, previous })
    this.audit(audit, previous === null ? null : { status: previous }, { status })
    return this.view(urn, c)
  }

  async getCustomer (urn: string): Promise<Customer | null> {
    this.assertOpen()
    const c = this.customers.get(urn)
    return c === undefined ? null : this.view(urn, c)
  }

  private view (urn: string, c: CustomerState): Customer {
    return { urn, customerId: c.customerId, status: c.status, available: c.available, held: c.held, cards: Object.fromEntries(c.cards) }
  }

  private moneyOp (kind: MoneyOpKind, urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): MoneyOpResult {
    this.assertOpen()
    assertAmount(amount, kind, { zero: kind === 'note' })
    const c = this.customers.get(urn)
    if (c === undefined) reject('CUSTOMER_NOT_FOUND')
    const key = this.keys.moneyOp(urn, kind, reference)
    const kept = this.moneyOps.get(key)
    const prior = kept !== undefined && kept.expiresAtMs > this.clock() ? kept.value : undefined
    if (prior !== undefined) {
      if (prior === amount) return { replayed: true, available: c.available }
      reject('REFERENCE_CONFLICT')
    }
    if (kind === 'debit' && amount > c.available) insufficientFunds(c.available, amount)
    if (kind === 'credit' && c.available + amount > MAX_BALANCE) reject('BALANCE_LIMIT')
    const before = { available: String(c.available) }
    c.available += kind === 'debit' ? -amount : amount
    this.moneyOps.set(key, { value: amount, expiresAtMs: this.clock() + this.retentionMs })
    this.emit(urn, event?.type ?? (kind === 'debit' ? 'funds.debited' : 'funds.credited'),
      kind === 'note' ? { reference, available: String(c.available) } : { reference, amount: String(amount), available: String(c.available) },
      event?.details !== undefined ? JSON.stringify(event.details) : undefined)
    this.audit(audit, before, { available: String(c.available) })
    return { replayed: false, available: c.available }
  }

  async credit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    return this.moneyOp('credit', urn, amount, reference, event, audit)
  }

  async debit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult> {
    return this.moneyOp('debit', urn, amount, reference, event, audit)
  }

  async recordCompletion (urn: string, reference: string, event: MoneyEvent): Promise<MoneyOpResult> {
    return this.moneyOp('note', urn, 0, reference, event)
  }

  async getDecision (urn: string, reference: string): Promise<DecisionRecord | null> {
    this.assertOpen()
    const key = this.keys.decision(urn, reference)
    const rec = this.getRecord(key)
    if (rec === undefined) return null
    const { reversalRequested: _, ...pub } = structuredClone(rec)
    return { ...normalizeRecord(pub as unknown as Record<string, unknown>), expiresAtMs: this.decisions.get(key)?.expiresAtMs ?? null }
  }

  /** every customer's live decision with this reference, through the reference index */
  decisionsByReference (reference: string): DecisionRecord[] {
    return this.liveRecords([...this.byReference.get(reference) ?? []])
  }

  /** every live decision (the journal of the embedded store) */
  decisionRecords (): DecisionRecord[] {
    return this.liveRecords([...this.decisions.keys()])
  }

  private liveRecords (keys: string[]): DecisionRecord[] {
    const out: DecisionRecord[] = []
    for (const key of keys) {
      const rec = this.getRecord(key)
      if (rec === undefined) continue
      const { reversalRequested: _, ...pub } = structuredClone(rec)
      out.push(normalizeRecord(pub as unknown as Record<string, unknown>))
    }
    return out
  }

  async reverse (urn: string, reference: string, amount: number | null, audit?: AuditContext): Promise<ReversalResult> {
    this.assertOpen()
    if (amount !== null) assertAmount(amount, 'reversal amount')
    const key = this.keys.decision(urn, reference)
    const rec = this.getRecord(key)
    if (rec === undefined) reject('DECISION_NOT_FOUND')
    const requested = amount === null ? '' : String(amount)
    const cust = this.customers.get(urn)
    if (rec.reversal !== null) {
      if (rec.reversalRequested === requested) return { replayed: true, released: Number(rec.reversal.amount), available: cust?.available ?? 0 }
      alreadyReversed(reference, rec.reversal)
    }
    if (rec.code !== '00') reject('NOT_APPROVED')
    const held = Number(rec.held)
    const amt = amount ?? held
    if (amt > held) reject('EXCEEDS_HOLD')
    const availableBefore = cust?.available ?? 0
    if (cust !== undefined) cust.available += amt
    const left = held - amt
    this.holdRelease(key, rec.last4, cust, amt, left)
    const kept: Array<[string, string]> = []
    for (const [wkey, member] of rec.limitEntries) {
      const removed = this.removeEntry(wkey, member)
      if (left > 0 && removed !== undefined) {
        const m = limitMember(left, reference)
        this.windowAdd(wkey, { score: removed.score, member: m })
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
    this.emit(urn, 'decision.reversed', { reference, last4: rec.last4, released: String(amt), held: String(left), available: String(cust?.available ?? 0) })
    this.audit(audit, { held: String(held), available: String(availableBefore) },
      { held: String(left), released: String(Number(rec.released) + amt), available: String(cust?.available ?? 0) })
    return { replayed: false, released: amt, available: cust?.available ?? 0 }
  }

  async readDecisionStream (urn: string, count = 10000): Promise<Array<Record<string, string>>> {
    return (this.streams.get(bucketOf(urn)) ?? []).slice(0, count).map((e) => flatEvent(e.id, e.fields))
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
    this.indexLifecycle(kind, id, value)
    return { created: true, value }
  }

  /** adds a saved record to its customers' indexes (in the same step as the save: nothing awaits between) */
  private indexLifecycle (kind: LifecycleKind, id: string, value: object): void {
    const now = this.clock()
    for (const urn of lifecycleUrnsOf(value)) {
      let index = this.lifecycleIndex.get(urn)
      if (index === undefined || index.expiresAtMs <= now) {
        index = { entries: new Map(), expiresAtMs: 0 }
        this.lifecycleIndex.set(urn, index)
      }
      index.expiresAtMs = now + LIFECYCLE_TTL_SECONDS * 1000
      const member = `${kind}:${id}`
      if (!index.entries.has(member)) index.entries.set(member, now)
      for (const [m] of index.entries) {
        if (index.entries.size <= LIFECYCLE_INDEX_MAX) break
        index.entries.delete(m)
      }
    }
  }

  async listLifecycle (urn: string, limit: number): Promise<LifecycleRef[]> {
    this.assertOpen()
    const index = this.lifecycleIndex.get(urn)
    if (index === undefined || index.expiresAtMs <= this.clock()) return []
    return [...index.entries].reverse().slice(0, limit).map(([m, atMs]) => lifecycleRefOf(m, atMs))
  }

  async getLifecycle<T extends object> (kind: LifecycleKind, id: string): Promise<T | null> {
    this.assertOpen()
    const e = this.live(this.keys.lifecycle(kind, id))
    return e === undefined ? null : JSON.parse(e.value) as T
  }

  async putLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T, expectedRev?: number, expires = true): Promise<void> {
    this.assertOpen()
    if (expectedRev !== undefined) {
      const e = this.live(this.keys.lifecycle(kind, id))
      const rev = e === undefined ? 0 : (JSON.parse(e.value) as { rev?: unknown }).rev
      if ((typeof rev === 'number' ? rev : 0) !== expectedRev) throw new LifecycleStale(`${kind} ${id} changed since it was read`)
    }
    // a record not final is kept until a save makes it final
    this.lifecycle.set(this.keys.lifecycle(kind, id), { value: JSON.stringify(value), expiresAtMs: expires ? this.clock() + LIFECYCLE_TTL_SECONDS * 1000 : Number.POSITIVE_INFINITY })
    this.indexLifecycle(kind, id, value)
  }

  async lockLifecycle (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    this.assertOpen()
    const key = this.keys.lifecycleLock(kind, id)
    if (this.live(key) !== undefined) return false
    this.lifecycle.set(key, { value: owner, expiresAtMs: this.clock() + ttlMs })
    return true
  }

  async renewLifecycleLock (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean> {
    this.assertOpen()
    const e = this.live(this.keys.lifecycleLock(kind, id))
    if (e?.value !== owner) return false
    e.expiresAtMs = this.clock() + ttlMs
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

/** The amount of a limit-window entry '<amount>|<reference>'. */
function memberAmount (member: string): number {
  return Number(member.slice(0, member.indexOf('|')))
}
