// The card-lifecycle records (loads, transfers, unloads) of a customer, from the store's index of them, and
// those an audit record names (the Queues page's failed calls), with each record's status now.
import type { AuditRecord } from '../domain/audit.js'
import type { LifecycleKind } from '../store/types.js'
import type { ConsoleOptions } from './deps.js'

export interface LifecycleRow { kind: LifecycleKind, id: string, status: string, amount: string, route: string, at: string, outcome: string, keyId: string, urn: string }

/** the lifecycle call an audit record names, as (kind, reference) */
export function lifecycleOf (rec: AuditRecord): { kind: LifecycleKind, id: string } | null {
  const [method, path = ''] = rec.route.split(' ')
  if (method !== 'POST') return null
  const t = rec.target
  if (path.startsWith('/v1/loads')) {
    const id = t.merchantReferenceNo ?? t.ref
    return id === undefined ? null : { kind: 'load', id }
  }
  if (path === '/v1/transfers' && t.clientTxnId !== undefined) return { kind: 'transfer', id: t.clientTxnId }
  if (path === '/v1/unloads' && t.clientTxnId !== undefined) return { kind: 'unload', id: t.clientTxnId }
  return null
}

/** The customer's card-lifecycle records, as found through the audit of the calls that made them. */
export async function lifecycleRows (opts: ConsoleOptions, audit: AuditRecord[]): Promise<LifecycleRow[]> {
  const seen = new Set<string>()
  const rows: LifecycleRow[] = []
  for (const rec of audit) {
    const l = lifecycleOf(rec)
    if (l === null || seen.has(`${l.kind}:${l.id}`)) continue
    seen.add(`${l.kind}:${l.id}`)
    const stored = await opts.store.getLifecycle<Record<string, unknown>>(l.kind, l.id)
    rows.push({
      kind: l.kind,
      id: l.id,
      status: typeof stored?.status === 'string' ? stored.status : stored === null ? 'no longer kept' : '-',
      amount: typeof stored?.amount === 'string' ? stored.amount : '',
      route: rec.route,
      at: new Date(rec.atMs).toISOString(),
      outcome: rec.outcome,
      keyId: rec.keyId,
      urn: typeof stored?.urn === 'string' ? stored.urn : typeof stored?.fromUrn === 'string' ? stored.fromUrn : rec.target.urn ?? rec.target.fromUrn ?? ''
    })
  }
  return rows
}

/** how many of a customer's lifecycle records its page shows */
export const CUSTOMER_LIFECYCLE_MAX = 50

export interface CustomerLifecycleRow { kind: LifecycleKind, id: string, status: string, amount: string, side: string, at: string }

/**
 * A customer's lifecycle records, newest first, from the store's index (both sides of a transfer), with what
 * the customer's audit names that the index does not (records saved before there was one).
 */
export async function customerLifecycleRows (opts: ConsoleOptions, urn: string, audit: AuditRecord[]): Promise<CustomerLifecycleRow[]> {
  const refs = await opts.store.listLifecycle(urn, CUSTOMER_LIFECYCLE_MAX)
  const seen = new Set(refs.map((r) => `${r.kind}:${r.id}`))
  const older: Array<{ kind: LifecycleKind, id: string, atMs: number }> = []
  for (const rec of audit) {
    const l = lifecycleOf(rec)
    if (l === null || seen.has(`${l.kind}:${l.id}`)) continue
    seen.add(`${l.kind}:${l.id}`)
    older.push({ ...l, atMs: rec.atMs })
  }
  const all = [...refs, ...older].sort((a, b) => b.atMs - a.atMs).slice(0, CUSTOMER_LIFECYCLE_MAX)
  return await Promise.all(all.map(async (r) => {
    const stored = await opts.store.getLifecycle<Record<string, unknown>>(r.kind, r.id)
    const side = stored?.fromUrn === urn ? `to ${String(stored.toUrn)}` : stored?.toUrn === urn ? `from ${String(stored.fromUrn)}` : ''
    return {
      kind: r.kind,
      id: r.id,
      status: typeof stored?.status === 'string' ? stored.status : stored === null ? 'no longer kept' : '-',
      amount: typeof stored?.amount === 'string' ? stored.amount : '',
      side,
      at: new Date(r.atMs).toISOString()
    }
  }))
}
