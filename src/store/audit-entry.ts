// An audit record as everyone outside the store sees it (GET /admin/v1/audit, the audit.recorded event): a
// card's controls before and after a change read as `GET …/controls` shows them ({"ECOM": {"enabled": false}}),
// never as the store's hash fields ({"ECOM|enabled": "0"}). Every other state is already in the API's words.
import type { AuditRecord } from '../domain/audit.js'
import { CONTROL_FIELDS, CONTROL_KINDS } from '../domain/controls.js'
import { entriesFromFields } from './control-fields.js'

function isControlField (name: string): boolean {
  const [kind, field, more] = name.split('|')
  return more === undefined && (CONTROL_KINDS as readonly string[]).includes(kind ?? '') && (CONTROL_FIELDS as readonly string[]).includes(field ?? '')
}

/** A state of the card controls' script (every key `KIND|field`) in the API's shape; any other state as it is. */
export function auditStateOf (state: Record<string, unknown> | null | undefined): Record<string, unknown> | null {
  if (state == null) return null
  const names = Object.keys(state)
  if (names.length === 0 || !names.every(isControlField)) return state
  return entriesFromFields(Object.fromEntries(names.map((n) => [n, String(state[n])]))) as Record<string, unknown>
}

export function auditEntryOf<T extends Pick<AuditRecord, 'before' | 'after'>> (rec: T): T {
  return { ...rec, before: auditStateOf(rec.before), after: auditStateOf(rec.after) }
}
