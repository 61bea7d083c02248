// Every format a card-lifecycle record has been stored in, and how a record of an earlier one is read now.
// A record stays in the store until it is settled (and its lifetime after that), so a version reads records
// every earlier version wrote, often in the middle of their call: a transfer held and sent, its answer lost.
// What a field's absence means is decided here, once, for every reader: the services, the tests that write
// such records, and the money simulation, which starts from records of each format (its model reads them
// with the meanings below).
import { fingerprintOf, type HeldMoveRecord } from './held-move.js'
import type { LoadRecord } from './loads.js'

/** One stored format of one kind of record: what it has that the format before did not. */
export interface RecordFormat {
  /** numbered from 1, the first format stored */
  format: number
  /** the version that began writing it (its first commit's date and subject) */
  since: string
  added: readonly string[]
  removed?: readonly string[]
}

/**
 * The formats, oldest first; the last of each kind is the one written now. A record carries no format
 * number: its fields say which it is (`formatOf`).
 */
export const LIFECYCLE_FORMATS = {
  load: [
    { format: 1, since: '2026-11-21 card lifecycle API', added: ['merchantReferenceNo', 'urn', 'amount', 'currencyCode', 'cardLast4', 'status', 'pgTransactionId', 'upstream', 'createdAtMs', 'updatedAtMs'] },
    { format: 2, since: '2026-11-23 an operation unconfirmed past retention is reconciled', added: ['reconcile (FAILED only)'] },
    { format: 3, since: '2026-11-23 revisions', added: ['rev'] },
    { format: 4, since: '2026-11-24 lifecycle records kept until settled', added: ['crediting'] },
    { format: 5, since: '2026-11-27 loads count their authorizes', added: ['authorizes'] }
  ],
  transfer: [
    { format: 1, since: '2026-11-21 card lifecycle API (the sender debited after the platform\'s 00)', added: ['clientTxnId', 'fromUrn', 'toUrn', 'amount', 'status', 'upstream', 'ledgerTransactionId', 'reconcile', 'createdAtMs', 'updatedAtMs'] },
    { format: 2, since: '2026-11-21 transfers hold first', added: ['held (boolean)', 'holdSeq', 'reason'] },
    { format: 3, since: '2026-11-23 holds derived from idempotent money operations', added: ['hold {urn, amount, seq, state}', 'responseToken', 'fromAccountNumber', 'toAccountNumber'], removed: ['held', 'holdSeq'] },
    { format: 4, since: '2026-11-23 a hash of the request\'s values, not the values', added: ['fingerprint'], removed: ['fromAccountNumber', 'toAccountNumber'] },
    { format: 5, since: '2026-11-23 revisions; one clientTxnId space', added: ['rev', 'sends'] },
    { format: 6, since: '2026-11-24 lifecycle records kept until settled', added: ['completing'] }
  ],
  unload: [
    { format: 1, since: '2026-11-23 wallet unload', added: ['clientTxnId', 'urn', 'customerId', 'accountNumber', 'amount', 'fee', 'request', 'status', 'upstream', 'ledgerTransactionId', 'hold', 'responseToken', 'reconcile', 'reason', 'createdAtMs', 'updatedAtMs'] },
    { format: 2, since: '2026-11-23 a hash of the request\'s values, not the values', added: ['fingerprint', 'requestDateTimeMs'], removed: ['accountNumber', 'request'] },
    { format: 3, since: '2026-11-23 revisions; one clientTxnId space', added: ['rev', 'sends'] },
    { format: 4, since: '2026-11-24 lifecycle records kept until settled', added: ['completing'] }
  ],
  preauth: [
    { format: 1, since: '2026-11-21 card lifecycle API (recorded after the gateway answered)', added: ['pgTransactionId', 'action', 'merchantReferenceNo', 'amount', 'status', 'upstream', 'atMs'] },
    { format: 2, since: '2026-11-23 recorded before the gateway is asked; revisions', added: ['status PENDING', 'upstream null', 'rev'] }
  ]
} as const satisfies Record<string, readonly RecordFormat[]>

export type FormattedKind = keyof typeof LIFECYCLE_FORMATS

/**
 * A count of party calls that may have left, absent from a record written before it was kept: at least one
 * earlier call may have reached the party (its answer lost), so a repeat never takes the party's "already
 * had it" for an answer about a call of its own only.
 */
export const UNKNOWN_COUNT_AT_LEAST = 1

/** Sends of a transfer or unload that may have reached the platform so far (unknown: at least one). */
export function sendsSoFar (r: Pick<HeldMoveRecord, 'sends'>): number {
  return r.sends ?? UNKNOWN_COUNT_AT_LEAST
}

/** Authorizes of a load that may have reached the gateway so far (unknown: at least one). */
export function authorizesSoFar (r: Pick<LoadRecord, 'authorizes'>): number {
  return r.authorizes ?? UNKNOWN_COUNT_AT_LEAST
}

/**
 * Written for a held move found in a format before holds were money operations (transfer formats 1 and 2):
 * its money was moved under other store references, so extauth cannot settle it alone.
 */
export const EARLIER_FORMAT_RECONCILE = 'this transfer was recorded by a version before holds were recorded as money operations, and was ' +
  'not settled: check its outcome on the platform and the sender\'s and receiver\'s balances here, then settle them by hand'

/** The fields a transfer or unload record of any format may carry. */
type AnyHeldMove = Omit<HeldMoveRecord, 'hold' | 'fingerprint'> & {
  hold?: HeldMoveRecord['hold']
  fingerprint?: string
  /** transfer format 2 */
  held?: boolean
  holdSeq?: number
  /** transfer format 3 */
  fromAccountNumber?: string
  toAccountNumber?: string
  fromUrn?: string
  toUrn?: string
  amount?: string
  /** unload format 1: the platform's request as sent, requestDateTime an ISO string */
  accountNumber?: string
  request?: Record<string, unknown> & { requestDateTime?: string }
  urn?: string
}

/** The request values unload format 1 kept, in the order unloads.ts fingerprints them. */
function unloadValues (urn: string, q: Record<string, unknown>, customerId: unknown): unknown[] {
  const v = (k: string): unknown => q[k] ?? null
  return [urn, q.accountNumber, q.amount, q.fee, q.receiver, q.sourceType, q.fundFlowType, q.implId, q.implType, q.beneficiaryId, customerId, v('customerMobile'), v('reservedField1'), v('extra')]
}

/**
 * A transfer or unload record as this version reads it, whatever format it was written in. Fields added
 * since are left absent where their absence has a meaning (`sends`, `completing`, `rev`); a fingerprint is
 * made from the values an earlier format kept (and those values dropped: a caller may put anything in an
 * account number); a record from before holds were money operations is left to an operator unless final.
 */
export function readHeldMove<R extends HeldMoveRecord> (kind: 'transfer' | 'unload', stored: R): R {
  const r = stored as unknown as AnyHeldMove
  if (r.hold !== undefined && r.fingerprint !== undefined && r.request === undefined && r.fromAccountNumber === undefined) return stored
  const out: AnyHeldMove & Record<string, unknown> = { ...r }
  if (kind === 'transfer' && r.fromAccountNumber !== undefined) {
    // format 3: the fingerprint transfers.ts makes of a call's values
    out.fingerprint ??= fingerprintOf([r.fromUrn, r.toUrn, Number(r.amount), r.fromAccountNumber, r.toAccountNumber])
    delete out.fromAccountNumber
    delete out.toAccountNumber
  }
  if (kind === 'unload' && r.request !== undefined) {
    // format 1: the request as sent, customerId as resolved; a caller may have sent it or left it to the store
    const q = r.request
    const urn = r.urn ?? ''
    out.fingerprint ??= fingerprintOf(unloadValues(urn, q, q.customerId ?? null))
    out.fingerprintAlso = fingerprintOf(unloadValues(urn, q, null))
    if (q.requestDateTime !== undefined) out.requestDateTimeMs ??= Date.parse(q.requestDateTime)
    delete out.request
    delete out.accountNumber
  }
  if (r.hold === undefined) {
    // formats 1 and 2: their holds and credits used other store references
    const final = r.status === 'TRANSFERRED' || r.status === 'DECLINED' || r.status === 'FAILED'
    out.hold = { urn: r.fromUrn ?? '', amount: r.amount ?? '0', seq: r.holdSeq ?? 0, state: r.status === 'TRANSFERRED' ? 'spent' : r.held === true ? 'held' : 'none' }
    out.responseToken = null
    if (!final) {
      out.status = 'FAILED'
      out.reconcile = EARLIER_FORMAT_RECONCILE
    }
    delete out.held
    delete out.holdSeq
  }
  return out as unknown as R
}

/**
 * Whether a repeat is the recorded call: its fingerprint is the one the record keeps, or the other its
 * earlier format allowed; a record that kept no fingerprint nor the values to make one (transfer formats 1
 * and 2) is the call when the values it kept agree (`keptAgree`: parties and amount).
 */
export function sameCall (r: HeldMoveRecord, fingerprint: string, keptAgree: boolean): boolean {
  if (r.fingerprint === fingerprint || r.fingerprintAlso === fingerprint) return true
  return (r as { fingerprint?: string }).fingerprint === undefined && keptAgree
}

/**
 * A record written now, as an earlier format stored it: what tests and the money simulation put in a store
 * to stand for a record an earlier version left there. `kept`: the values the format kept that today's
 * record no longer holds (account numbers, the unload's request).
 */
export function asFormat (kind: FormattedKind, format: number, r: Record<string, unknown>, kept: Record<string, unknown> = {}): Record<string, unknown> {
  const formats: readonly RecordFormat[] = LIFECYCLE_FORMATS[kind]
  if (!formats.some((f) => f.format === format)) throw new Error(`no ${kind} format ${format}`)
  const out: Record<string, unknown> = { ...r }
  // the fields each later format added are taken off, newest first
  const drop = (fields: string[]): void => { for (const f of fields) Reflect.deleteProperty(out, f) }
  if (kind === 'load') {
    if (format < 5) drop(['authorizes'])
    if (format < 4) drop(['crediting'])
    if (format < 3) drop(['rev'])
    if (format < 2) drop(['reconcile'])
  } else if (kind === 'transfer' || kind === 'unload') {
    const base = kind === 'transfer' ? 0 : 2
    if (format + base < 6) drop(['completing'])
    if (format + base < 5) drop(['rev', 'sends'])
    if (format + base < 4) {
      drop(['fingerprint'])
      if (kind === 'transfer') Object.assign(out, { fromAccountNumber: kept.fromAccountNumber, toAccountNumber: kept.toAccountNumber })
      else {
        drop(['requestDateTimeMs'])
        Object.assign(out, { accountNumber: kept.accountNumber, request: kept.request })
      }
    }
    if (kind === 'transfer' && format < 3) {
      const hold = out.hold as HeldMoveRecord['hold']
      drop(['hold', 'responseToken', 'fromAccountNumber', 'toAccountNumber'])
      if (format === 2) Object.assign(out, { held: hold.state === 'held', holdSeq: hold.seq })
      else drop(['reason'])
    }
  } else if (format < 2) {
    drop(['rev'])
  }
  return out
}
