// The settlement's vocabulary (docs/operations/settlement.md): the statement's postings, what each came to
// (the outcomes table), the exceptions an operator works, and the store operations that apply them.
import type { AuditContext } from '../domain/audit.js'

export const POSTING_TYPES = ['purchase', 'refund', 'reversal', 'load', 'transfer_out', 'transfer_in', 'unload', 'fee', 'adjustment'] as const
export type PostingType = typeof POSTING_TYPES[number]
/** the lines matched against a card-lifecycle record (a load, a transfer or an unload) */
export const LIFECYCLE_POSTINGS: ReadonlySet<PostingType> = new Set(['load', 'transfer_out', 'transfer_in', 'unload'])

export const OUTCOMES = [
  'cleared', 'cleared_partial', 'cleared_over', 'late_clearing', 'force_post', 'declined_here', 'refund', 'reversal',
  'fee', 'adjustment', 'lifecycle_matched', 'lifecycle_mismatch', 'unmatched', 'approved_not_posted'
] as const
export type Outcome = typeof OUTCOMES[number]

export const EXCEPTION_KINDS = [
  'late_clearing', 'force_post', 'declined_here', 'lifecycle_mismatch', 'lifecycle_failed', 'negative_balance', 'unmatched', 'approved_not_posted',
  'platform_id_conflict', 'standin_unconfirmed'
] as const
export type ExceptionKind = typeof EXCEPTION_KINDS[number]

export const RESOLVE_ACTIONS = ['accept', 'release', 'credit', 'debit', 'writeOff'] as const
export type ResolveAction = typeof RESOLVE_ACTIONS[number]

/** One line of a statement, checked (amount in minor units). */
export interface Posting {
  platformId: string
  type: PostingType
  reference: string
  urn: string
  /** '' when the line has none */
  last4: string
  amount: number
  currency: string
  postedAt: string
}

export interface StatementHeader {
  id: string
  from: string
  to: string
  complete: boolean
}

/** What a lifecycle line matched (read by the caller: lifecycle records are not in the customer's slot). */
export interface LifecycleVerdict {
  matched: boolean
  /** what accepting the platform's line moves for the cardholder: + a credit, - a debit */
  acceptDelta: number
  detail: string
  /**
   * The line is the owner's side of a FAILED record with a `reconcile` note: the line settles it. `held` is what
   * the record keeps taken here for it (an out line: a transfer's or unload's hold; a load: 0), `sign` the
   * cardholder's side of the line (+1 in, -1 out). The step compares the line with `held`, less what a
   * resolution of the record's lifecycle_failed exception `exceptionId` gave back (or plus what it took), and
   * closes that exception while it is open.
   */
  failed?: { exceptionId: string, held: number, sign: 1 | -1 }
}

export interface PostingResult {
  /** 'applied' now; 'replayed': applied before (by this statement or another); 'conflict': the platformId was applied with other content */
  status: 'applied' | 'replayed' | 'conflict'
  outcome: Outcome
  /** the statement that applied it */
  statementId: string
  exceptions: string[]
  /** the customer's available balance after it; null when unknown */
  available: number | null
}

export interface ReconException {
  id: string
  kind: ExceptionKind
  status: 'open' | 'resolved'
  urn: string
  reference: string
  last4: string
  platformId: string
  statementId: string
  postingType: string
  outcome: string
  /** digit strings */
  amount: string
  /** what `accept` does: moves nothing ('none'), credits or debits the amount, or releases the hold */
  accept: { action: 'none' | 'credit' | 'debit' | 'release', amount: string }
  detail: string
  createdAtMs: number
  resolution?: { action: ResolveAction, amount: string, reason: string, keyId: string, atMs: number }
}

/**
 * An exception opened outside a statement (a lifecycle record left FAILED, a stand-in replay below zero):
 * `key` names it within its customer's bucket, so opening it again opens nothing.
 */
export interface NewException {
  kind: ExceptionKind
  key: string
  urn: string
  reference: string
  last4: string
  postingType: string
  outcome: string
  amount: number
  accept: { action: ReconException['accept']['action'], amount: number }
  detail: string
}

export interface ExceptionFilter {
  status?: 'open' | 'resolved'
  kind?: string
  urn?: string
  limit: number
  /** from a previous page's nextCursor */
  cursor?: string
}

/** The store's side of settlement; each operation is one atomic step on one customer's slot. */
export interface SettlementStore {
  applyPosting (p: Posting, statementId: string, lifecycle: LifecycleVerdict | null): Promise<PostingResult>
  /** expires the holds of one bucket due at asOfMs, at most `max`; `more` when some are left */
  expireBucket (bucket: number, asOfMs: number, max: number): Promise<{ expired: number, more: boolean }>
  /** the buckets with a hold due at asOfMs */
  dueBuckets (asOfMs: number): Promise<number[]>
  getException (id: string): Promise<ReconException | null>
  listExceptions (filter: ExceptionFilter): Promise<{ items: ReconException[], nextCursor: string | null }>
  /** marks it resolved with its audit record; the same resolution again is a replay */
  markResolved (id: string, resolution: { action: ResolveAction, amount: string, reason: string, keyId: string }, audit?: AuditContext): Promise<{ replayed: boolean, exception: ReconException }>
  /**
   * An approval of a complete statement's period on no statement (final mode): opens its approved_not_posted
   * exception once; the exception's id, or null when there is none to open (a hold, released, posted).
   */
  notPosted (urn: string, reference: string, statementId: string): Promise<{ id: string, amount: number } | null>
  /** opens the exception once, keyed by `key` in the urn's bucket: `opened` false when it was already there */
  openException (x: NewException): Promise<{ id: string, opened: boolean }>
  /**
   * What the platform's statements and expiry did to a decision's hold: the amount cleared against it (purchases
   * posted), and when its hold expired (null: it did not). Read by the console's decision page.
   */
  decisionSettlement (urn: string, reference: string): Promise<DecisionSettlement>
  putStatement (report: StatementReport): Promise<void>
  getStatement (id: string): Promise<StatementReport | null>
}

export interface DecisionSettlement {
  /** minor units posted by clearings against the authorization */
  cleared: number
  /** when expiry released its hold, null when it did not */
  expiredAtMs: number | null
}

export interface StatementReport extends StatementHeader {
  lines: number
  /** postings this statement applied (in this import or an earlier one of the same statement) */
  applied: number
  /** postings already applied by another statement (an overlap) */
  duplicates: number
  /** postings whose platformId was applied with other content */
  conflicts: number
  outcomes: Partial<Record<Outcome, { count: number, amount: string }>>
  /** the exceptions its postings opened (GET /admin/v1/reconciliation/exceptions lists them) */
  exceptions: number
  importedAtMs: number
}

/** How long the record of an applied posting is kept: a statement imported again within it changes nothing. */
export const POSTING_RETENTION_MS = 45 * 24 * 3600_000
/**
 * A line posted this long ago or more is not imported: it may have been applied (at or after its posting) and
 * its record forgotten since, so applying it now could move its money twice. A day less than the retention:
 * for a platform's clock ahead of ours.
 */
export const POSTING_HORIZON_MS = POSTING_RETENTION_MS - 24 * 3600_000

/** the bucket of an exception id 'b<bucket>~<platformId>[~...]' */
export function bucketOfException (id: string): number | null {
  const m = /^b(\d{1,4})~/.exec(id)
  return m === null ? null : Number(m[1])
}
