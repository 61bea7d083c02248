// Strict reading of the controls shape, shared by PATCH bodies (the route's schema) and the defaults file: one
// JSON Schema, and anything but the exact shape is refused with the field named, so a mistake is reported
// instead of half applied.
import type { ErrorObject } from 'ajv'
import { strictAjv } from '../strict-ajv.js'
import { MAX_AMOUNT } from '../domain/amounts.js'
import { CONTROL_FIELDS, CONTROL_KINDS, type ControlEntries } from '../domain/controls.js'

export type ParsedControls =
  | { ok: true, entries: ControlEntries }
  /** `field` is the dotted path of the first bad value (`ECOM.dailyMax`), or '' for the whole document */
  | { ok: false, field: string, message: string }

const limit = (what: string) => ({ type: ['integer', 'null'], minimum: 0, maximum: MAX_AMOUNT, description: `${what}, in minor units (an integer); null for no limit` })

const KIND_TEXT: Record<typeof CONTROL_KINDS[number], string> = {
  POS: 'transactions of channel POS',
  ATM: 'transactions of channel ATM',
  ECOM: 'transactions of channel ECOM (online, card not present)',
  'POS-Contactless': 'transactions of channel POS-Contactless',
  international: 'every cross-border transaction (a billingCurrency other than currencyCode), on top of its channel\'s control'
}

/** A set of controls: some kinds, each with some of its fields. */
export const controlsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(CONTROL_KINDS.map((kind) => [kind, {
    type: 'object',
    additionalProperties: false,
    description: KIND_TEXT[kind],
    properties: {
      enabled: { type: 'boolean', description: 'false declines every transaction of this kind (05 control_off)' },
      perTransactionMax: limit('the most one transaction may debit'),
      dailyMax: limit('the most the card\'s approved transactions of this kind may debit in one local day (TIMEZONE)')
    }
  }])),
  examples: [{ ECOM: { enabled: true, dailyMax: 200000 }, international: { enabled: false } }]
}

const validate = strictAjv.compile<ControlEntries>(controlsSchema)

const MESSAGES = {
  document: `must be an object of ${CONTROL_KINDS.join(', ')}`,
  kind: 'is not a control (one of ' + CONTROL_KINDS.join(', ') + ')',
  entry: 'must be an object with enabled, perTransactionMax, dailyMax',
  field: `is not a field (one of ${CONTROL_FIELDS.join(', ')})`,
  enabled: 'must be true or false',
  limit: `must be an integer amount in minor units from 0 to ${MAX_AMOUNT}, or null for no limit`
}

/** The field and message of the schema's first complaint about a controls document. */
export function controlsProblem (errors: readonly ErrorObject[]): { field: string, message: string } {
  const e = errors[0]
  if (e === undefined) return { field: '', message: MESSAGES.document }
  const at = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
  if (e.keyword === 'additionalProperties') {
    const name = String((e.params as { additionalProperty: string }).additionalProperty)
    return at.length === 0 ? { field: name, message: MESSAGES.kind } : { field: `${at.join('.')}.${name}`, message: MESSAGES.field }
  }
  if (at.length === 0) return { field: '', message: MESSAGES.document }
  if (at.length === 1) return { field: at.join('.'), message: MESSAGES.entry }
  return { field: at.join('.'), message: at[1] === 'enabled' ? MESSAGES.enabled : MESSAGES.limit }
}

export function parseControls (value: unknown): ParsedControls {
  if (validate(value)) return { ok: true, entries: value }
  return { ok: false, ...controlsProblem(validate.errors ?? []) }
}
