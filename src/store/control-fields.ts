// How a card's own controls are kept in the store: one hash field per kind and field (`ECOM|dailyMax`), so
// a change names only its fields and the authorize step reads only the kinds that apply. Values: '1'/'0'
// for enabled, digits for a limit, '' for "no limit" (set by the card, unlike a field absent).
import { CONTROL_FIELDS, CONTROL_KINDS, type ControlDefault, type ControlEntries, type ControlEntry, type ControlKind } from '../domain/controls.js'

export function fieldName (kind: ControlKind, field: string): string {
  return `${kind}|${field}`
}

/** field/value pairs of a patch, in a stable order */
export function patchToFields (patch: ControlEntries): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const kind of CONTROL_KINDS) {
    const e = patch[kind]
    if (e === undefined) continue
    if (e.enabled !== undefined) out.push([fieldName(kind, 'enabled'), e.enabled ? '1' : '0'])
    for (const f of ['perTransactionMax', 'dailyMax'] as const) {
      const v = e[f]
      if (v !== undefined) out.push([fieldName(kind, f), v === null ? '' : String(v)])
    }
  }
  return out
}

export function entriesFromFields (fields: Record<string, string>): ControlEntries {
  const out: ControlEntries = {}
  for (const [name, value] of Object.entries(fields)) {
    const [kind, field] = name.split('|') as [ControlKind, string]
    if (!(CONTROL_KINDS as readonly string[]).includes(kind) || !(CONTROL_FIELDS as readonly string[]).includes(field)) continue
    const e: ControlEntry = out[kind] ?? (out[kind] = {})
    if (field === 'enabled') e.enabled = value === '1'
    else e[field as 'perTransactionMax' | 'dailyMax'] = value === '' ? null : Number(value)
  }
  return out
}

/** A flat Redis reply ([field, value, ...]) as an object. */
export function pairsToObject (flat: unknown): Record<string, string> {
  const o: Record<string, string> = {}
  if (!Array.isArray(flat)) return o
  for (let i = 0; i + 1 < flat.length; i += 2) o[String(flat[i])] = String(flat[i + 1])
  return o
}

/** The default of one field as the authorize step takes it ('1'/'0', digits or ''). */
export function defaultArgs (d: ControlDefault): [string, string, string, string] {
  return [d.kind, d.enabled ? '1' : '0', d.perTransactionMax === null ? '' : String(d.perTransactionMax), d.dailyMax === null ? '' : String(d.dailyMax)]
}
