// A card-lifecycle record left FAILED with a `reconcile` note (its outcome must be checked on the platform) is
// queued for an operator as a lifecycle_failed exception, once per record: the moves hand the record over
// through a hook (services.ts), the statement's line of the record settles it (lifecycle-match.ts). Lifecycle
// records are read here as the store keeps them, as lifecycle-match.ts reads them.
import type { Logger } from 'pino'
import { bucketOf, part } from '../store/keys.js'
import type { NewException, SettlementStore } from './types.js'

export type FailedKind = 'load' | 'transfer' | 'unload'

/** the fields of a load, transfer or unload record read here */
export interface LifecycleRecordFields {
  status?: string
  reconcile?: string
  amount?: string
  fee?: string
  urn?: string
  fromUrn?: string
  hold?: { state?: string, amount?: string }
  createdAtMs?: number
}

/** whose money the record moves: a load's or unload's customer, a transfer's sender */
export function ownerOf (kind: FailedKind, r: LifecycleRecordFields): string | undefined {
  return kind === 'transfer' ? r.fromUrn : r.urn
}

/**
 * What the record keeps taken from its owner here: a transfer's or unload's hold while it is `held` (a hold
 * being taken or given back when it failed is not known to be either, and counts nothing); a load takes nothing.
 */
export function heldOf (r: LifecycleRecordFields): number {
  return r.hold?.state === 'held' ? Number(r.hold.amount ?? '0') : 0
}

/** the posting type of the owner's line of a record */
const OWNER_LINE = { load: 'load', transfer: 'transfer_out', unload: 'unload' } as const

export function ownerLine (kind: FailedKind): string {
  return OWNER_LINE[kind]
}

/** the exception's key in its owner's bucket: one a record's life (an id used again after it was forgotten is another) */
function keyOf (kind: FailedKind, id: string, createdAtMs: number): string {
  return `lf~${kind}~${createdAtMs}~${part(id)}`
}

export function lifecycleFailedId (urn: string, kind: FailedKind, id: string, createdAtMs: number): string {
  return `b${bucketOf(urn)}~${keyOf(kind, id, createdAtMs)}`
}

/** whether the record waits for an operator: FAILED with a reconcile note */
export function isFailedForOperator (r: LifecycleRecordFields): boolean {
  return r.status === 'FAILED' && r.reconcile !== undefined
}

/**
 * Opens the record's lifecycle_failed exception; nothing when it is already open or resolved, or when the
 * record is not FAILED with a note. Its `amount` is what the record keeps held here (what `release` gives back);
 * `accept` moves nothing: the platform's line decides, or an operator's release, credit or debit.
 */
export async function openLifecycleFailed (settlement: SettlementStore, kind: FailedKind, id: string, r: LifecycleRecordFields): Promise<{ id: string, opened: boolean } | null> {
  const urn = ownerOf(kind, r)
  if (!isFailedForOperator(r) || urn === undefined) return null
  const held = heldOf(r)
  const moved = Number(r.amount ?? '0') + (kind === 'unload' ? Number(r.fee ?? '0') : 0)
  const x: NewException = {
    kind: 'lifecycle_failed',
    key: keyOf(kind, id, r.createdAtMs ?? 0),
    urn,
    reference: id,
    last4: '',
    postingType: OWNER_LINE[kind],
    outcome: 'lifecycle_failed',
    amount: held,
    accept: { action: 'none', amount: 0 },
    detail: `the ${kind} ${id} of ${moved} is FAILED: ${r.reconcile ?? ''}; ${held > 0 ? `${held} held here` : 'nothing held here'}`
  }
  return await settlement.openException(x)
}

/**
 * The moves' hook (src/moves/records.ts, FailedHook): a load, transfer or unload left FAILED with a reconcile
 * note becomes a lifecycle_failed exception. A failure to open it is logged and thrown: the call fails as on
 * any store failure (the record is saved FAILED), and its repeat hands the record over again.
 */
export function lifecycleFailedHook (settlement: SettlementStore, log: Logger): (kind: string, id: string, record: object) => Promise<void> {
  return async (kind, id, record) => {
    if (kind !== 'load' && kind !== 'transfer' && kind !== 'unload') return
    try {
      await openLifecycleFailed(settlement, kind, id, record)
    } catch (err) {
      log.warn({ kind, id, err: (err as Error).message }, 'lifecycle_failed exception not opened; a repeat of the call opens it')
      throw err
    }
  }
}
