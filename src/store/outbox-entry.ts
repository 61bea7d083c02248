// An outbox entry as the scripts write it (fields t, u, d, x; see `emit` in lua/includes/common.lua) turned into the event
// body the receiver gets: {id, type, createdAt, data}. Both stores and the relay read entries through here.
import { entriesFromFields, pairsToObject } from './control-fields.js'
import { controlHitOf } from './record.js'
import { auditEntryOf } from './audit-entry.js'
import { AUDIT_EVENT_TYPE, type AuditRecord } from '../domain/audit.js'
import { metaOfRest } from './record-format.js'

export { EVENT_TYPES, type EventType } from '../domain/events.js'

export interface WebhookEvent {
  id: string
  type: string
  /** ISO 8601, the store's clock when the change was made */
  createdAt: string
  data: Record<string, unknown>
}

/** The webhook-id of a stream entry: unique per bucket stream, stable on every attempt. */
export function eventId (bucket: number, streamId: string): string {
  return `evt_${bucket}_${streamId.replace('-', '_')}`
}

/** The stream id and bucket an event id names, or null when it is not one of ours. */
export function parseEventId (id: string): { bucket: number, streamId: string } | null {
  const m = /^evt_(\d+)_(\d+)_(\d+)$/.exec(id)
  return m === null ? null : { bucket: Number(m[1]), streamId: `${m[2] as string}-${m[3] as string}` }
}

function json (raw: string | undefined): Record<string, unknown> {
  if (raw === undefined || raw === '') return {}
  const v = JSON.parse(raw) as unknown
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : {}
}

/** Lua's cjson writes an empty array as {} */
function list (v: unknown): unknown[] {
  return Array.isArray(v) ? v : []
}

/**
 * A decision.created entry's extra data, the decision's meta: the record's rest as the authorize script stores
 * it (a JSON array, the request's side packed against the decision's own urn, reference, last4 and debit), or,
 * from an instance writing format 1 records (DECISION_RECORD_FORMAT=json) or an earlier version, the meta as a
 * JSON object.
 */
function decisionExtra (fields: Record<string, string>, d: Record<string, unknown>): Record<string, unknown> {
  const raw = fields.x
  if (raw === undefined || !raw.startsWith('[')) return json(raw)
  const own = { urn: fields.u ?? '', reference: String(d.reference), last4: String(d.last4), debit: String(d.debit) }
  return (metaOfRest(raw, own) ?? {}) as unknown as Record<string, unknown>
}

function iso (ms: unknown): string | null {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null
}

export function eventBody (bucket: number, streamId: string, fields: Record<string, string>): WebhookEvent {
  const type = fields.t ?? 'unknown'
  const d = json(fields.d)
  let data: Record<string, unknown>
  if (type === 'decision.created') {
    const x = decisionExtra(fields, d)
    const { arrivedAtMs, decidedAtMs, shadowLimitHits, ...rest } = d
    const shadowRules = list(x.shadowHits).map((h) => (h as { ruleId?: unknown }).ruleId).filter((r) => typeof r === 'string')
    data = {
      urn: fields.u,
      ...rest,
      control: controlHitOf(rest.control),
      request: x.request ?? null,
      rulesVersion: x.rulesVersion ?? null,
      shadowHits: [...shadowRules, ...list(shadowLimitHits)],
      arrivedAt: iso(arrivedAtMs),
      decidedAt: iso(decidedAtMs),
      // made in stand-in while the store was unreachable, replayed into it (docs/operations/standin.md)
      ...(x.standIn === true ? { standIn: true } : {})
    }
  } else if (type === 'card.controls.updated') {
    data = { urn: fields.u, last4: d.last4, before: entriesFromFields(pairsToObject(d.before)), after: entriesFromFields(pairsToObject(d.after)) }
  } else if (type === AUDIT_EVENT_TYPE) {
    data = { urn: fields.u, ...auditEntryOf({ ...d, ...json(fields.x) } as unknown as Pick<AuditRecord, 'before' | 'after'>) }
  } else {
    data = { urn: fields.u, ...d, ...json(fields.x) }
  }
  const ms = Number(streamId.slice(0, streamId.indexOf('-')))
  return { id: eventId(bucket, streamId), type, createdAt: new Date(ms).toISOString(), data }
}

/** One entry flattened for audits and tests: id, type, urn and the data's scalar fields as strings. */
export function flatEvent (streamId: string, fields: Record<string, string>): Record<string, string> {
  const body = eventBody(0, streamId, fields)
  const o: Record<string, string> = { id: streamId, type: body.type }
  for (const [k, v] of Object.entries(body.data)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') o[k] = String(v)
  }
  return o
}
