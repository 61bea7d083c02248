// An operator's resolution of an exception (docs/operations/settlement.md, Working the queue): its money
// moved first, idempotently on the exception's id, then the exception marked resolved with its audit record.
// A repeat of the same resolution moves nothing again; another resolution of a resolved one is refused.
import type { AuditContext } from '../domain/audit.js'
import type { Store } from '../store/types.js'
import { apiError, StoreRejection } from '../errors.js'
import type { ReconException, ResolveAction, SettlementStore } from './types.js'

export interface Resolution {
  action: ResolveAction
  /** credit and debit: required; release: default all that is held */
  amount?: number
  reason: string
}

/** the reference of an exception's money operation: one per exception and kind of move */
export function exceptionReference (id: string): string {
  return `reconciliation:${id}`
}

export async function resolveException (store: Store, settlement: SettlementStore, id: string, r: Resolution, keyId: string, audit?: AuditContext): Promise<{ replayed: boolean, exception: ReconException }> {
  const x = await settlement.getException(id)
  if (x === null) throw apiError('EXCEPTION_NOT_FOUND', `no exception ${id}`)
  let action: ResolveAction | 'none' = r.action
  let amount = r.amount ?? null
  if (r.action === 'accept') {
    action = x.accept.action === 'none' ? 'none' : x.accept.action
    amount = Number(x.accept.amount)
  }
  if ((action === 'credit' || action === 'debit') && (amount === null || amount <= 0)) {
    throw apiError('VALIDATION', `${r.action} needs an amount`, { field: 'amount' })
  }
  if (x.kind === 'lifecycle_failed') return await resolveLifecycleFailed(store, settlement, x, r, action, amount, keyId, audit)
  const mark = { action: r.action, amount: amount === null ? '' : String(amount), reason: r.reason, keyId }
  if (x.status === 'resolved') return await settlement.markResolved(id, mark, audit)
  const ref = exceptionReference(id)
  const event = { type: action === 'debit' ? 'funds.debited' as const : 'funds.credited' as const, details: { exception: id, action: r.action } }
  if (action === 'credit') await store.credit(x.urn, amount as number, ref, event)
  else if (action === 'debit') await store.debit(x.urn, amount as number, ref, event)
  else if (action === 'release') await store.reverse(x.urn, x.reference, amount)
  return await settlement.markResolved(id, mark, audit)
}

/**
 * A lifecycle_failed exception: its statement line may settle it at any time, weighing the line against what
 * the resolution moved (lifecycle-match.ts), so the resolution is marked first, in one step against the line's,
 * and its money moved after, idempotently on the exception: a repeat of the same resolution moves it if a
 * failure came between (within the store's memory of the reference, as every exception's). `release` gives
 * back what the record holds here (the exception's amount), whole or in part; there is no authorization hold.
 */
async function resolveLifecycleFailed (
  store: Store, settlement: SettlementStore, x: ReconException, r: Resolution, action: ResolveAction | 'none', amount: number | null, keyId: string, audit?: AuditContext
): Promise<{ replayed: boolean, exception: ReconException }> {
  if (action === 'release') {
    const held = Number(x.amount)
    amount ??= held
    if (held <= 0 || amount <= 0 || amount > held) {
      throw apiError('VALIDATION', `release gives back what the ${x.postingType} ${x.reference} holds here: ${held}`, { field: 'amount' })
    }
  }
  if (action === 'debit' && x.status === 'open') {
    // marked first, a debit the balance cannot take would stand as made: refused before it is marked
    const c = await store.getCustomer(x.urn)
    if (c !== null && c.available < (amount as number)) throw new StoreRejection('INSUFFICIENT_FUNDS', `customer ${x.urn} has ${c.available} available`)
  }
  const out = await settlement.markResolved(x.id, { action: r.action, amount: amount === null ? '' : String(amount), reason: r.reason, keyId }, audit)
  const ref = exceptionReference(x.id)
  const details = { exception: x.id, action: r.action }
  if (action === 'credit' || action === 'release') await store.credit(x.urn, amount as number, ref, { type: 'funds.credited', details })
  else if (action === 'debit') await store.debit(x.urn, amount as number, ref, { type: 'funds.debited', details })
  return out
}
