// Strict reading of the controls shape, shared by PATCH bodies and the defaults file: anything but the exact
// shape is refused with the field named, so a mistake is reported instead of half applied.
import { MAX_AMOUNT } from '../store/record.js'
import { CONTROL_FIELDS, CONTROL_KINDS, type ControlEntries, type ControlEntry, type ControlKind } from './types.js'

export type ParsedControls =
  | { ok: true, entries: ControlEntries }
  /** `field` is the dotted path of the first bad value (`ECOM.dailyMax`), or '' for the whole document */
  | { ok: false, field: string, message: string }

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function isAmount (v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_AMOUNT
}

export function parseControls (value: unknown): ParsedControls {
  if (!isObject(value)) return { ok: false, field: '', message: `must be an object of ${CONTROL_KINDS.join(', ')}` }
  const entries: ControlEntries = {}
  for (const [kind, raw] of Object.entries(value)) {
    if (!(CONTROL_KINDS as readonly string[]).includes(kind)) {
      return { ok: false, field: kind, message: `is not a control (one of ${CONTROL_KINDS.join(', ')})` }
    }
    if (!isObject(raw)) return { ok: false, field: kind, message: 'must be an object with enabled, perTransactionMax, dailyMax' }
    const entry: ControlEntry = {}
    for (const [name, v] of Object.entries(raw)) {
      const field = `${kind}.${name}`
      if (!(CONTROL_FIELDS as readonly string[]).includes(name)) {
        return { ok: false, field, message: `is not a field (one of ${CONTROL_FIELDS.join(', ')})` }
      }
      if (name === 'enabled') {
        if (typeof v !== 'boolean') return { ok: false, field, message: 'must be true or false' }
        entry.enabled = v
      } else {
        if (v !== null && !isAmount(v)) {
          return { ok: false, field, message: `must be an integer amount in minor units from 0 to ${MAX_AMOUNT}, or null for no limit` }
        }
        entry[name as 'perTransactionMax' | 'dailyMax'] = v
      }
    }
    entries[kind as ControlKind] = entry
  }
  return { ok: true, entries }
}
