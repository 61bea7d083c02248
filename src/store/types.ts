// One store interface for the decision pipeline and the admin API; implemented by the Redis store and the
// in-memory store, which pass the same contract suite (test/store/contract.ts).
import type { ResponseCode } from '../domain/request.js'
import type { LimitCheck, RuleHit } from '../domain/rule-hits.js'
import type { DecisionReason } from '../domain/decision-reason.js'
import type { ControlEntries, ControlHit, ControlsInput } from '../domain/controls.js'
import type { AuditContext, AuditRecord } from '../domain/audit.js'

// the store's answer carries it: its users read it with the rest of the interface
export type { DecisionReason }

export const CUSTOMER_STATUSES = ['ACTIVE', 'BLOCKED', 'CLOSED'] as const
export type CustomerStatus = typeof CUSTOMER_STATUSES[number]
export const CARD_STATUSES = ['ACTIVE', 'LOST', 'STOLEN', 'BLOCKED'] as const
export type CardStatus = typeof CARD_STATUSES[number]

export interface AuthorizeInput {
  urn: string
  last4: string
  reference: string
  /** unique per request attempt: a deadline compensation only undoes its own attempt's decision */
  attempt: string
  /** integer minor units */
  debitAmount: number
  /** the input hash: same reference with another fingerprint is a conflict */
  fingerprint: string
  /** request arrival (epoch ms, the app's clock): the timestamp of limit-window entries */
  nowMs: number
  /** epoch ms after which the store refuses to commit (checked against the store's own clock) */
  deadlineAtMs: number
  /** the stateless rules' decline, applied after idempotency and customer/card state */
  decline: RuleHit | null
  limits: LimitCheck[]
  /** stored with the decision as it is (rules version, shadow hits, request summary) */
  meta: DecisionMeta
  /** the card controls that apply, checked after customer/card state and before the rules' decline; absent: none */
  controls?: ControlsInput
  /**
   * The replay of an approval made in stand-in (src/standin/): applied as the 00 it was answered, whatever the
   * store holds now (the balance may go below zero), with the debit, window entries, daily totals and event
   * of an online approval; no deadline. A decision already stored for the reference is answered as always.
   */
  standIn?: true
  /** SETTLEMENT_MODE=holds: an approval is a hold that expires then (epoch ms); absent: a 00 is final */
  holdExpiresAtMs?: number
}

export interface DecisionMeta {
  rulesVersion: string
  shadowHits: RuleHit[]
  transactionAmount: string
  currencyCode: string
  channel: string
  risk?: unknown
  /** the request's fields as received (strings; no secret exists in it: last four digits only) */
  request?: Record<string, string>
  /** decided in stand-in while the store was unreachable, and replayed into it */
  standIn?: true
}

export interface AuthorizeResult {
  code: ResponseCode
  reason: DecisionReason
  ruleId: string | null
  /** an earlier decision for this reference was returned */
  replayed: boolean
  /** shadow limits this transaction would have taken over their max */
  shadowLimitHits: string[]
  /** available balance after the decision; null when unknown (unknown urn, replay) */
  available: number | null
  /** the card control that declined, with the values it saw (not given on a replay) */
  control?: ControlHit
}

export interface DecisionRecord {
  urn: string
  reference: string
  last4: string
  attempt: string
  code: ResponseCode
  reason: DecisionReason
  ruleId: string | null
  /** the debit amount asked for */
  debit: string
  /** what is still held (debit - released) */
  held: string
  released: string
  fingerprint: string
  shadowLimitHits: string[]
  /** [key, member] pairs of the limit-window entries this decision added */
  limitEntries: Array<[string, string]>
  arrivedAtMs: number
  /** arrival of the attempt that owns the decision (the platform's latest), when not the first */
  attemptArrivedAtMs?: number
  deadlineAtMs: number
  /** the store's clock when it decided */
  decidedAtMs: number
  /** answered 05 by the deadline guard; `decidedCode` then holds what the store had decided, if anything */
  answeredOnDeadline: boolean
  decidedCode: ResponseCode | null
  reversal: { amount: string, atMs: number } | null
  meta: DecisionMeta | null
  /** [key, amount] of the card controls' daily totals this decision counts in */
  controlEntries: Array<[string, string]>
  /** the card control that declined, with the values it saw */
  control: ControlHit | null
  /** what the store saw when it decided (absent on records written before these were kept) */
  customerStatus?: string | null
  cardStatus?: string | null
  /** for 51: the available balance it saw */
  availableSeen?: string | null
  /** for a limit decline: the window's use before this transaction and its max */
  limitSeen?: { ruleId: string, usedBefore: string, max: string } | null
  /** the effective settings of the card controls that applied: e '1'|'0', p and d digits or '' (no limit) */
  controlsSeen?: Record<string, { e: string, p: string, d: string }> | null
  /** when the store forgets this decision (epoch ms); null when not known */
  expiresAtMs?: number | null
}

export interface AbandonInput {
  urn: string
  reference: string
  attempt: string
  fingerprint: string
  limits: LimitCheck[]
  last4: string
  arrivedAtMs: number
  deadlineAtMs: number
  /** the authorize input's controls: their daily totals are declared to the store */
  controls?: ControlsInput
  /**
   * false: only release what an earlier attempt holds, leave no tombstone when there is no decision (the
   * attempt surely never reached the store). Default true.
   */
  tombstone?: boolean
}

/** The compensation of one authorize attempt: what it names of the attempt, its arrival and its controls. */
export function abandonInputOf (input: AuthorizeInput): AbandonInput {
  return {
    urn: input.urn,
    reference: input.reference,
    attempt: input.attempt,
    fingerprint: input.fingerprint,
    limits: input.limits,
    last4: input.last4,
    arrivedAtMs: input.nowMs,
    deadlineAtMs: input.deadlineAtMs,
    ...(input.controls !== undefined ? { controls: input.controls } : {})
  }
}

export type AbandonOutcome =
  /** no decision existed: a tombstone now answers 05 to this reference */
  | 'tombstoned'
  /** this attempt's decision was turned into a 05, its hold and counters released */
  | 'released'
  /** nothing to undo: already abandoned, or the decision belongs to another attempt or transaction */
  | 'untouched'

export interface Customer {
  urn: string
  customerId: string | null
  status: CustomerStatus
  /** integer minor units */
  available: number
  /** open authorization holds (SETTLEMENT_MODE=holds); the ledger (posted) is available + held */
  held: number
  cards: Record<string, CardStatus>
}

export interface MoneyOpResult {
  /** an earlier operation with this reference was returned */
  replayed: boolean
  available: number
}

/** A money operation of the store: a 'note' moves nothing, it records that an operation completed. */
export type MoneyOpKind = 'credit' | 'debit' | 'note'

/** The event a credit or debit writes instead of funds.credited / funds.debited. */
export interface MoneyEvent {
  type: 'load.completed' | 'transfer.completed' | 'unload.completed' | 'funds.credited' | 'funds.debited'
  /** strings only: the lifecycle's references (never a secret) */
  details?: Record<string, string>
}

export interface ReversalResult {
  replayed: boolean
  released: number
  available: number
}

/** Card-lifecycle operations kept by the caller's reference (README "Card lifecycle API"). */
export type LifecycleKind = 'load' | 'transfer' | 'unload' | 'preauth'

/** A customer's lifecycle record as its index names it: kind, reference, and when it was first saved (store clock, ms). */
export interface LifecycleRef { kind: LifecycleKind, id: string, atMs: number }

/** The customers a lifecycle record belongs to: its `urn`, or a transfer's sender and receiver. */
export function lifecycleUrnsOf (value: object): string[] {
  const v = value as Record<string, unknown>
  const urns = [v.urn, v.fromUrn, v.toUrn].filter((u): u is string => typeof u === 'string' && u !== '')
  return [...new Set(urns)]
}

/** An index member `<kind>:<id>` read back (a kind has no ':'; the id may). */
export function lifecycleRefOf (member: string, atMs: number): LifecycleRef {
  const at = member.indexOf(':')
  return { kind: member.slice(0, at) as LifecycleKind, id: member.slice(at + 1), atMs }
}

export interface Store {
  readonly kind: 'memory' | 'redis'
  authorize (input: AuthorizeInput): Promise<AuthorizeResult>
  abandon (input: AbandonInput): Promise<AbandonOutcome>
  /**
   * The changes of the admin API take the route's `audit` context: the change and its audit record (with
   * the state before and after) are one atomic step. A change refused or replayed writes no record.
   */
  putCustomer (urn: string, patch: { customerId?: string, status?: CustomerStatus }, audit?: AuditContext): Promise<Customer>
  putCard (urn: string, last4: string, status: CardStatus, audit?: AuditContext): Promise<Customer>
  getCustomer (urn: string): Promise<Customer | null>
  /** `event` names the operation this money movement completes (its event type and details) */
  credit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult>
  debit (urn: string, amount: number, reference: string, event?: MoneyEvent, audit?: AuditContext): Promise<MoneyOpResult>
  /**
   * Records, once per reference, that an operation whose money already moved has completed, and writes its
   * event in the same step (an unload's `unload.completed`). Moves no money; rejects CUSTOMER_NOT_FOUND.
   */
  recordCompletion (urn: string, reference: string, event: MoneyEvent): Promise<MoneyOpResult>
  getDecision (urn: string, reference: string): Promise<DecisionRecord | null>
  reverse (urn: string, reference: string, amount: number | null, audit?: AuditContext): Promise<ReversalResult>
  /**
   * An audit record on its own (a change that is not one store script, or a refused call), with its
   * audit.recorded event; in the bucket of `target.urn` when there is one. Returns it as stored.
   */
  appendAudit (record: Omit<AuditRecord, 'atMs'>): Promise<AuditRecord>
  /** the undelivered events of this urn's bucket, flattened (for audits and tests; see outbox-entry.ts) */
  readDecisionStream (urn: string, count?: number): Promise<Array<Record<string, string>>>
  /** stores `value` unless a record exists; returns the record that is there afterwards */
  createLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<{ created: boolean, value: T }>
  getLifecycle<T extends object> (kind: LifecycleKind, id: string): Promise<T | null>
  /**
   * The customer's lifecycle records, newest first: those whose `urn`, `fromUrn` or `toUrn` (both sides of a
   * transfer) is this customer, indexed when the record is saved (see LIFECYCLE_INDEX_MAX). An entry may name
   * a record no longer kept.
   */
  listLifecycle (urn: string, limit: number): Promise<LifecycleRef[]>
  /**
   * Replaces the record. With `expectedRev` it is a compare-and-set: the record is written only if the
   * stored one's `rev` (0 when absent, or when it has none) is `expectedRev`; otherwise it rejects with
   * LifecycleStale and changes nothing. The caller puts the next revision in `value.rev`. `expires`
   * (default true): the record is kept LIFECYCLE_TTL_SECONDS after this save; false: it is kept until a
   * later save lets it expire (a record that is not final must never be forgotten, see moves/records.ts).
   */
  putLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T, expectedRev?: number, expires?: boolean): Promise<void>
  /** a short exclusive lock on one lifecycle reference, held by `owner`; false when someone else holds it */
  lockLifecycle (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean>
  /** restarts the lock's ttl only if `owner` still holds it; false when it does not (expired, or taken since) */
  renewLifecycleLock (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean>
  /** releases the lock only if `owner` still holds it; true when it did */
  unlockLifecycle (kind: LifecycleKind, id: string, owner: string): Promise<boolean>
  /** the card's own control settings (not the defaults); rejects CUSTOMER_NOT_FOUND, CARD_NOT_FOUND */
  getCardControls (urn: string, last4: string): Promise<ControlEntries>
  /** sets the named fields atomically; returns the card's own settings before and after */
  patchCardControls (urn: string, last4: string, patch: ControlEntries, audit?: AuditContext): Promise<{ before: ControlEntries, after: ControlEntries }>
  /** true when the store can take commands now */
  ready (): boolean
  ping (): Promise<void>
  close (): Promise<void>
}

const DAY_MS = 24 * 3600_000
/**
 * Decisions, and the references of credits and debits, are kept `DECISION_RETENTION_DAYS` (at least 7;
 * the default has a day more for clock skew between instances): the reversal horizon. A decision whose
 * limit-window entries count longer is kept as long as they count, and a day more.
 */
export const DECISION_RETENTION_MS_DEFAULT = 8 * DAY_MS
export const DECISION_RETENTION_MS_MIN = 7 * DAY_MS

/** How long the store keeps a decision that may add entries to these windows. */
export function decisionTtlMs (retentionMs: number, limits: ReadonlyArray<{ retainMs: number }>): number {
  let ttl = retentionMs
  for (const l of limits) if (l.retainMs + DAY_MS > ttl) ttl = l.retainMs + DAY_MS
  return ttl
}
export { AUDIT_RETENTION_MS_DEFAULT } from '../domain/audit.js'

/** The bucket an audit record on its own goes to: its customer's, else one spread by the record's id. */
export function auditUrnOf (record: Pick<AuditRecord, 'id' | 'target'>): string {
  return record.target.urn ?? record.id
}
/**
 * Final lifecycle records (loads, transfers, unloads, pre-auths) are kept 30 days after their last change;
 * a record saved as not final (money held or moved but not settled, or a party that may have acted) is
 * kept without expiry until a save makes it final (putLifecycle's `expires`).
 */
export const LIFECYCLE_TTL_SECONDS = 30 * 24 * 3600
/**
 * A customer's lifecycle index keeps its newest this many records, and is forgotten LIFECYCLE_TTL_SECONDS
 * after its last write (as a final record is): bounded whatever the customer's history.
 */
export const LIFECYCLE_INDEX_MAX = 200
/**
 * How long a card control's daily total is kept after its first approval: a local day is at most 25 h
 * (a DST change), and an hour more covers clock skew between instances.
 */
export const CONTROL_DAILY_RETAIN_MS = 26 * 3600 * 1000
export { EVENTS_BACKLOG_MAX_DEFAULT } from '../domain/events.js'
/** each of the 1,024 buckets' share of EVENTS_BACKLOG_MAX */
export function backlogPerBucket (total: number): number {
  return Math.max(1, Math.ceil(total / 1024))
}
