// The card-lifecycle records (loads, transfers, unloads) an audit record names, with each record's status now:
// the calls are audited with their references, and the records are kept by reference.
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
