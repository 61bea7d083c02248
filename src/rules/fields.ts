// The facts a rule may name, with the type each one has at evaluation time. Knowing the type at load time
// lets the loader refuse comparisons that could never be meant (gt on a merchant name, eq 7995 against the
// string mcc "7995") instead of letting them silently never match.

/**
 * - `string`: compared as a string (eq, ne, in, notIn, startsWith).
 * - `digits`: a request field that is a digit string (mcc, currencyCode, ...). Compared as a string by
 *   eq/ne/in/notIn/startsWith (operands must be digit strings), and as a number by gt/gte/lt/lte/between
 *   (operands are integers), so `{"mcc": {"between": [3000, 3299]}}` matches airline MCCs.
 * - `integer`: a safe integer (amounts in minor units, hour, ...).
 * - `boolean`.
 */
export type FieldKind = 'string' | 'digits' | 'integer' | 'boolean'

export const FIELDS: Readonly<Record<string, FieldKind>> = Object.freeze({
  // request fields, strings as sent
  customerId: 'string',
  urn: 'string',
  merchantName: 'string',
  terminalId: 'string',
  mcc: 'digits',
  systemTraceAuditNumber: 'digits',
  cardNetwork: 'string',
  channel: 'string',
  merchantId: 'string',
  transactionAmount: 'digits',
  transactionReferenceNumber: 'string',
  currencyCode: 'digits',
  last4Digits: 'digits',
  originalRrn: 'string',
  orignialRrn: 'string',
  billingCurrency: 'digits',
  entityId: 'string',
  // derived; fee and billingAmount replace the request's strings with integers (README "Rules")
  amount: 'integer',
  billingAmount: 'integer',
  fee: 'integer',
  debitAmount: 'integer',
  crossBorder: 'boolean',
  hour: 'integer',
  dayOfWeek: 'integer',
  // risk service (asked only when a rule names one of these)
  'risk.available': 'boolean',
  'risk.ruleRating': 'integer',
  'risk.ruleSuggestion': 'string',
  'risk.stepUp': 'boolean'
})

/** The request fields copied into the facts as sent (all but fee and billingAmount, which become integers). */
export const REQUEST_STRING_FIELDS: readonly string[] = Object.freeze([
  'customerId', 'urn', 'merchantName', 'terminalId', 'mcc', 'systemTraceAuditNumber', 'cardNetwork', 'channel',
  'merchantId', 'transactionAmount', 'transactionReferenceNumber', 'currencyCode', 'last4Digits', 'originalRrn',
  'orignialRrn', 'billingCurrency', 'entityId'
])

export function fieldKind (name: string): FieldKind | undefined {
  return Object.hasOwn(FIELDS, name) ? FIELDS[name] : undefined
}

export const RISK_PREFIX = 'risk.'
