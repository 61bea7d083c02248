// The External Authorization body (spec "External Authorization request"). Sizes are maxima; numeric
// fields are digit strings ("162" is a valid numeric(6)); an optional field sent as "" counts as absent
// (withoutEmptyOptionals, below).
// Unknown extra fields are accepted and ignored by the endpoint. Kept in the shared vocabulary because the
// endpoint validates requests with it and `extauth rules test` validates its cases' requests with it.
import { CHANNELS } from './channels.js'

const digits = (max: number) => ({ type: 'string', pattern: `^[0-9]{1,${max}}$` }) as const
const optDigits = (max: number) => ({ type: 'string', pattern: `^[0-9]{0,${max}}$` }) as const
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const
const optText = (max: number) => ({ type: 'string', maxLength: max }) as const

export const authRequestSchema = {
  type: 'object',
  required: ['urn', 'terminalId', 'systemTraceAuditNumber', 'cardNetwork', 'channel', 'transactionAmount',
    'transactionReferenceNumber', 'last4Digits'],
  properties: {
    customerId: optText(50),
    urn: text(20),
    merchantName: optText(50),
    terminalId: text(50),
    mcc: optDigits(10),
    systemTraceAuditNumber: digits(6),
    cardNetwork: text(20),
    channel: { type: 'string', enum: CHANNELS },
    merchantId: optText(50),
    transactionAmount: digits(15),
    fee: optDigits(15),
    transactionReferenceNumber: text(50),
    currencyCode: { type: 'string', pattern: '^([0-9]{3})?$' },
    last4Digits: { type: 'string', pattern: '^[0-9]{4}$' },
    originalRrn: optText(30),
    orignialRrn: optText(30),
    billingCurrency: { type: 'string', pattern: '^([0-9A-Za-z]{3})?$' },
    billingAmount: optDigits(15),
    entityId: optText(50)
  }
} as const

const REQUIRED: readonly string[] = authRequestSchema.required

/** The fields a request may leave out: every property of the schema it does not require. */
export const OPTIONAL_REQUEST_FIELDS: readonly string[] = Object.freeze(Object.keys(authRequestSchema.properties).filter((f) => !REQUIRED.includes(f)))

/**
 * The contract's one rule for an optional field sent as "": absent. Applied once where a request is read
 * (the endpoint, a rules test case), to the request itself, so that no later reader (the facts' crossBorder,
 * the card controls, a rule's `exists`, the journal) can take "" for a value. A request without "" is left
 * as it is.
 */
export function withoutEmptyOptionals<T extends object> (req: T): T {
  const r = req as Record<string, unknown>
  for (const f of OPTIONAL_REQUEST_FIELDS) if (r[f] === '') Reflect.deleteProperty(r, f)
  return req
}
