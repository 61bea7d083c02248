// The audit trail's vocabulary (docs/operations/admin-access.md): who changed what through the admin
// listener, with the state before and after. Ids and states only: never a key, a secret or card data.
// Imports nothing of ours.

/** What the admin listener knows of a call before it runs: who, which route, on what. */
export interface AuditContext {
  /** unique per record */
  id: string
  /** the admin key's id (never the key) */
  keyId: string
  /** method and route pattern: `POST /admin/v1/customers/:urn/credits` */
  route: string
  /** the scope the route needs */
  scope: string
  requestId: string
  /** what the call acts on: ids only (urn, last4, reference, ...) */
  target: Record<string, string>
  /** why, in the operator's words, for a change made through the console (free text; never card data) */
  reason?: string
}

export interface AuditRecord extends AuditContext {
  /** the store's clock when the record was written, epoch ms */
  atMs: number
  /** `done` for a change a store script made; `refused` for a missing scope; else the call's own outcome word */
  outcome: string
  /** the state the change saw and left (balances as digit strings, statuses, control settings, versions) */
  before: Record<string, unknown> | null
  after: Record<string, unknown> | null
}

export const AUDIT_EVENT_TYPE = 'audit.recorded'

/** AUDIT_RETENTION_DAYS: how long the store keeps audit records (the events are the lasting copy). */
export const AUDIT_RETENTION_MS_DEFAULT = 90 * 24 * 3600_000
