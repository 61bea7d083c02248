// The facts a rule may name, with the type each one has at evaluation time and the values it can take.
// Knowing them at load time lets the loader refuse comparisons that could never be meant (gt on a merchant
// name, eq 7995 against the string mcc "7995", hour 24, a five-digit MCC) instead of letting them silently
// never match. This table is also the source of the fields in rules/rules.schema.json.
import { CHANNELS } from '../domain/channels.js'

/**
 * - `string`: compared as a string (eq, ne, in, notIn, startsWith).
 * - `digits`: a request field that is a digit string (mcc, currencyCode, ...). Compared as a string by
 *   eq/ne/in/notIn/startsWith (operands must be digit strings), and as a number by gt/gte/lt/lte/between
 *   (operands are integers), so `{"mcc": {"between": [3000, 3299]}}` matches airline MCCs.
 * - `integer`: a safe integer (amounts in minor units, hour, ...).
 * - `boolean`.
 */
export type FieldKind = 'string' | 'digits' | 'integer' | 'boolean'

export type FieldValue = string | number | boolean

export interface FieldSpec {
  kind: FieldKind
  /** for people: shown by editors through the rule-file schema */
  description: string
  /** a value the field takes, quoted in hints and in the schema's examples */
  sample: FieldValue
  /** the only values the field takes (channel) */
  values?: readonly string[]
  /** integer fields: the smallest and largest value */
  min?: number
  max?: number
  /** digits fields: the exact number of digits, or the most */
  digits?: number
  digitsMax?: number
  /** every request has it, so a test that excludes all its values can never hold */
  alwaysPresent?: true
  /** a `when` that uses the field, for hints */
  example?: string
}

const MAX = Number.MAX_SAFE_INTEGER

export const FIELD_SPECS: Readonly<Record<string, Readonly<FieldSpec>>> = Object.freeze({
  // request fields, strings as sent
  customerId: { kind: 'string', description: 'the customer id as sent', sample: 'CUST-1' },
  urn: { kind: 'string', description: 'the customer (card account) reference as sent', sample: 'URN0001', alwaysPresent: true },
  merchantName: { kind: 'string', description: 'the merchant name as sent', sample: 'CASINO ROYALE', example: '{"merchantName": {"startsWith": "CASINO"}}' },
  terminalId: { kind: 'string', description: 'the terminal id as sent', sample: 'TERM0001', alwaysPresent: true },
  mcc: { kind: 'digits', description: 'merchant category code: 4 digits', sample: '7995', digits: 4, example: '{"mcc": {"in": ["7995", "7800"]}}' },
  systemTraceAuditNumber: { kind: 'digits', description: 'STAN: up to 6 digits', sample: '000123', digitsMax: 6, alwaysPresent: true },
  cardNetwork: { kind: 'string', description: 'the card network as sent, e.g. RUPAY', sample: 'RUPAY', alwaysPresent: true, example: '{"cardNetwork": {"notIn": ["RUPAY"]}}' },
  channel: { kind: 'string', description: `the channel: ${CHANNELS.join(', ')}`, sample: 'ECOM', values: CHANNELS, alwaysPresent: true, example: '{"channel": {"in": ["ECOM", "POS"]}}' },
  merchantId: { kind: 'string', description: 'the merchant id as sent', sample: 'MERCHANT0001' },
  transactionAmount: { kind: 'digits', description: 'the amount as sent, minor units: up to 15 digits', sample: '100000', digitsMax: 15, alwaysPresent: true, example: '{"transactionAmount": {"gte": 100000}}' },
  transactionReferenceNumber: { kind: 'string', description: 'the transaction reference as sent', sample: 'RRN0001', alwaysPresent: true },
  currencyCode: { kind: 'digits', description: 'ISO 4217 numeric currency of the transaction: 3 digits', sample: '356', digits: 3, example: '{"currencyCode": {"ne": "356"}}' },
  last4Digits: { kind: 'digits', description: 'the last 4 digits of the card', sample: '1234', digits: 4, alwaysPresent: true, example: '{"last4Digits": {"eq": "1234"}}' },
  originalRrn: { kind: 'string', description: 'the original transaction reference (also filled from orignialRrn)', sample: 'RRN0001' },
  orignialRrn: { kind: 'string', description: 'the sample spelling of originalRrn', sample: 'RRN0001' },
  billingCurrency: { kind: 'digits', description: 'ISO 4217 numeric billing currency: 3 digits', sample: '840', digits: 3, example: '{"billingCurrency": {"eq": "840"}}' },
  entityId: { kind: 'string', description: 'the entity id as sent', sample: 'ENTITY1' },
  // derived; fee and billingAmount replace the request's strings with integers (docs "Facts")
  amount: { kind: 'integer', description: 'transactionAmount in minor units (100000 = 1,000.00)', sample: 100000, min: 0, max: MAX, alwaysPresent: true, example: '{"amount": {"gte": 100000}}' },
  billingAmount: { kind: 'integer', description: 'billing amount in minor units; absent when not sent', sample: 100000, min: 0, max: MAX, example: '{"billingAmount": {"gt": 500000}}' },
  fee: { kind: 'integer', description: 'fee in minor units; absent when not sent', sample: 1000, min: 0, max: MAX, example: '{"fee": {"gt": 0}}' },
  debitAmount: { kind: 'integer', description: '(billingAmount or amount) + fee: what is held, in minor units', sample: 100000, min: 0, max: MAX, alwaysPresent: true, example: '{"debitAmount": {"gte": 100000}}' },
  crossBorder: { kind: 'boolean', description: 'billingCurrency present and different from currencyCode', sample: true, alwaysPresent: true, example: '{"crossBorder": {"eq": true}}' },
  hour: { kind: 'integer', description: 'hour of arrival in TIMEZONE: 0 to 23', sample: 22, min: 0, max: 23, alwaysPresent: true, example: '{"hour": {"gte": 22}}' },
  dayOfWeek: { kind: 'integer', description: 'day of arrival in TIMEZONE: 1 = Monday ... 7 = Sunday (ISO)', sample: 6, min: 1, max: 7, alwaysPresent: true, example: '{"dayOfWeek": {"in": [6, 7]}}' },
  // risk service (asked only when a rule names one of these)
  'risk.available': { kind: 'boolean', description: 'the risk service answered', sample: true, example: '{"risk.available": {"eq": true}}' },
  'risk.ruleRating': { kind: 'integer', description: 'total risk score, higher = riskier', sample: 90, example: '{"risk.ruleRating": {"gte": 90}}' },
  'risk.ruleSuggestion': { kind: 'string', description: 'the risk service\'s suggestion, e.g. ACCEPT', sample: 'ACCEPT', example: '{"risk.ruleSuggestion": {"ne": "ACCEPT"}}' },
  'risk.stepUp': { kind: 'boolean', description: 'additional authentication recommended', sample: true, example: '{"risk.stepUp": {"eq": true}}' }
} satisfies Record<string, FieldSpec>)

export const FIELDS: Readonly<Record<string, FieldKind>> = Object.freeze(
  Object.fromEntries(Object.entries(FIELD_SPECS).map(([name, s]) => [name, s.kind]))
)

export const FIELD_NAMES: readonly string[] = Object.freeze(Object.keys(FIELD_SPECS))

/** The request fields copied into the facts as sent (all but fee and billingAmount, which become integers). */
export const REQUEST_STRING_FIELDS: readonly string[] = Object.freeze([
  'customerId', 'urn', 'merchantName', 'terminalId', 'mcc', 'systemTraceAuditNumber', 'cardNetwork', 'channel',
  'merchantId', 'transactionAmount', 'transactionReferenceNumber', 'currencyCode', 'last4Digits', 'originalRrn',
  'orignialRrn', 'billingCurrency', 'entityId'
])

export function fieldKind (name: string): FieldKind | undefined {
  return Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined
}

export function fieldSpec (name: string): Readonly<FieldSpec> | undefined {
  return Object.hasOwn(FIELD_SPECS, name) ? FIELD_SPECS[name] : undefined
}

/** A `when` that uses the field, as hints show it. */
export function fieldExample (name: string): string {
  const s = fieldSpec(name)
  if (s === undefined) return ''
  return s.example ?? `{${JSON.stringify(name)}: {"eq": ${JSON.stringify(s.sample)}}}`
}

export const RISK_PREFIX = 'risk.'
