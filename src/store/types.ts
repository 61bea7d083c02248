// One store interface for the decision pipeline and the admin API; implemented by the Redis store and the
// in-memory store, which pass the same contract suite (test/store/contract.ts).
import type { ResponseCode } from '../decision/request.js'
import type { LimitCheck, RuleHit } from '../rules/types.js'
import type { ControlEntries, ControlHit, ControlsInput } from '../controls/types.js'

export const CUSTOMER_STATUSES = ['ACTIVE', 'BLOCKED', 'CLOSED'] as const
export type CustomerStatus = typeof CUSTOMER_STATUSES[number]
export const CARD_STATUSES = ['ACTIVE', 'LOST', 'STOLEN', 'BLOCKED'] as const
export type CardStatus = typeof CARD_STATUSES[number]

/** Why a decision came out as it did. Stable: it is logged, stored and counted in metrics. */
export type DecisionReason =
  | 'approved'
  | 'unknown_urn'
  | 'customer_blocked'
  | 'customer_closed'
  | 'card_lost'
  | 'card_stolen'
  | 'card_blocked'
  | 'card_unknown'
  | 'rule'
  | 'limit'
  | 'insufficient_funds'
  | 'conflict'
  | 'deadline'
  /** a card control is off for this kind of use (05) */
  | 'control_off'
  /** a card control's perTransactionMax or dailyMax would be passed (61) */
  | 'control_limit'

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
}

export interface DecisionMeta {
  rulesVersion: string
  shadowHits: RuleHit[]
  transactionAmount: string
  currencyCode: string
  channel: string
  risk?: unknown
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
  cards: Record<string, CardStatus>
}

export interface MoneyOpResult {
  /** an earlier operation with this reference was returned */
  replayed: boolean
  available: number
}

export interface ReversalResult {
  replayed: boolean
  released: number
  available: number
}

/** Card-lifecycle operations kept by the caller's reference (README "Card lifecycle API"). */
export type LifecycleKind = 'load' | 'transfer' | 'unload' | 'preauth'

export interface Store {
  readonly kind: 'memory' | 'redis'
  authorize (input: AuthorizeInput): Promise<AuthorizeResult>
  abandon (input: AbandonInput): Promise<AbandonOutcome>
  putCustomer (urn: string, patch: { customerId?: string, status?: CustomerStatus }): Promise<Customer>
  putCard (urn: string, last4: string, status: CardStatus): Promise<Customer>
  getCustomer (urn: string): Promise<Customer | null>
  credit (urn: string, amount: number, reference: string): Promise<MoneyOpResult>
  debit (urn: string, amount: number, reference: string): Promise<MoneyOpResult>
  getDecision (urn: string, reference: string): Promise<DecisionRecord | null>
  reverse (urn: string, reference: string, amount: number | null): Promise<ReversalResult>
  /** the approvals recorded in the decision stream of this urn's bucket (for audits and tests) */
  readDecisionStream (urn: string, count?: number): Promise<Array<Record<string, string>>>
  /** stores `value` unless a record exists; returns the record that is there afterwards */
  createLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<{ created: boolean, value: T }>
  getLifecycle<T extends object> (kind: LifecycleKind, id: string): Promise<T | null>
  putLifecycle<T extends object> (kind: LifecycleKind, id: string, value: T): Promise<void>
  /** a short exclusive lock on one lifecycle reference, held by `owner`; false when someone else holds it */
  lockLifecycle (kind: LifecycleKind, id: string, ttlMs: number, owner: string): Promise<boolean>
  /** releases the lock only if `owner` still holds it; true when it did */
  unlockLifecycle (kind: LifecycleKind, id: string, owner: string): Promise<boolean>
  /** the card's own control settings (not the defaults); rejects CUSTOMER_NOT_FOUND, CARD_NOT_FOUND */
  getCardControls (urn: string, last4: string): Promise<ControlEntries>
  /** sets the named fields atomically; returns the card's own settings before and after */
  patchCardControls (urn: string, last4: string, patch: ControlEntries): Promise<{ before: ControlEntries, after: ControlEntries }>
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
/** Lifecycle records (loads, transfers, pre-auths) are kept 30 days after their last change. */
export const LIFECYCLE_TTL_SECONDS = 30 * 24 * 3600
/**
 * How long a card control's daily total is kept after its first approval: a local day is at most 25 h
 * (a DST change), and an hour more covers clock skew between instances.
 */
export const CONTROL_DAILY_RETAIN_MS = 26 * 3600 * 1000
/** Per-bucket cap of the decision stream (approximate trimming). */
export const DECISION_STREAM_MAXLEN = 1000
