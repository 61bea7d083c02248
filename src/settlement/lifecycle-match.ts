// A load, transfer or unload line against the card-lifecycle record of its reference (the load's
// merchantReferenceNo, the transfer's or unload's clientTxnId). Lifecycle records are not kept in the
// customer's slot, so this is read before the posting's step, which records the verdict with the posting.
import type { Store } from '../store/types.js'
import type { LifecycleVerdict, Posting } from './types.js'
import { heldOf, isFailedForOperator, lifecycleFailedId, ownerLine, type LifecycleRecordFields } from './lifecycle-failed.js'

interface AnyRecord extends LifecycleRecordFields { toUrn?: string }

const KIND = { load: ['load', 'LOADED'], transfer_in: ['transfer', 'TRANSFERRED'], transfer_out: ['transfer', 'TRANSFERRED'], unload: ['unload', 'UNLOADED'] } as const

export async function lifecycleVerdict (store: Store, p: Posting): Promise<LifecycleVerdict | null> {
  if (!(p.type in KIND)) return null
  const [kind, done] = KIND[p.type as keyof typeof KIND]
  const r = await store.getLifecycle<AnyRecord>(kind, p.reference)
  // the cardholder's side of the line: + money in, - money out
  const sign: 1 | -1 = p.type === 'load' || p.type === 'transfer_in' ? 1 : -1
  if (r === null) return { matched: false, acceptDelta: sign * p.amount, detail: `no ${kind} record ${p.reference} here` }
  const owner = p.type === 'transfer_in' ? r.toUrn : p.type === 'transfer_out' ? r.fromUrn : r.urn
  if (owner !== p.urn) return { matched: false, acceptDelta: 0, detail: `the ${kind} record ${p.reference} is of another customer` }
  // an unload holds and moves its amount and fee together; the platform's line carries both
  const moved = Number(r.amount ?? '0') + (p.type === 'unload' ? Number(r.fee ?? '0') : 0)
  if (r.status === done) {
    if (moved === p.amount) return { matched: true, acceptDelta: 0, detail: '' }
    return { matched: false, acceptDelta: sign * (p.amount - moved), detail: `the ${kind} record ${p.reference} moved ${moved}` }
  }
  if (isFailedForOperator(r) && p.type === ownerLine(kind)) {
    // the owner's line of a record left to an operator: the platform moved p.amount; the step weighs it against
    // what the record keeps held here (and what a resolution of its exception moved since) and closes the exception
    const held = heldOf(r)
    return {
      matched: false,
      acceptDelta: sign * (p.amount - held),
      detail: `the ${kind} record ${p.reference} is FAILED (${held} held here): ${r.reconcile ?? ''}`,
      failed: { exceptionId: lifecycleFailedId(p.urn, kind, p.reference, r.createdAtMs ?? 0), held, sign }
    }
  }
  const note = isFailedForOperator(r) ? `: ${r.reconcile ?? ''}` : ''
  return { matched: false, acceptDelta: sign * p.amount, detail: `the ${kind} record ${p.reference} is ${r.status ?? 'unknown'}${note}` }
}
