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
    customerId: { ...optText(50), description: 'the customer id' },
    urn: { ...text(20), description: 'the unique reference number of the customer' },
    merchantName: { ...optText(50), description: 'the merchant\'s name' },
    terminalId: { ...text(50), description: 'the terminal id' },
    mcc: { ...optDigits(10), description: 'the payee merchant category code, digits (5411)' },
    systemTraceAuditNumber: { ...digits(6), description: 'the issuer\'s internal audit number, up to 6 digits' },
    cardNetwork: { ...text(20), description: 'the card scheme (RUPAY, VISA, ...)' },
    channel: { type: 'string', enum: CHANNELS, description: 'where the card is used: POS, ECOM, ATM or POS-Contactless' },
    merchantId: { ...optText(50), description: 'the payee merchant id' },
    transactionAmount: { ...digits(15), description: 'the amount in minor units, digits ("1250" is 12.50)' },
    fee: { ...optDigits(15), description: 'a fee in minor units, digits; debited with the amount' },
    transactionReferenceNumber: { ...text(50), description: 'the transaction\'s reference: the same reference again is the same transaction, answered as first' },
    currencyCode: { type: 'string', pattern: '^([0-9]{3})?$', description: 'ISO 4217 numeric code of transactionAmount (356 is INR); default DEFAULT_CURRENCY' },
    last4Digits: { type: 'string', pattern: '^[0-9]{4}$', description: 'the last four digits of the card number' },
    originalRrn: { ...optText(30), description: 'the RRN received from the network' },
    orignialRrn: { ...optText(30), description: 'originalRrn as the platform\'s sample spells it' },
    billingCurrency: { type: 'string', pattern: '^([0-9A-Za-z]{3})?$', description: 'ISO 4217 code of billingAmount, for a cross-border transaction' },
    billingAmount: { ...optDigits(15), description: 'the amount in the billing currency, minor units, for a cross-border transaction (debited instead of transactionAmount)' },
    entityId: { ...optText(50), description: 'the child entity, as in the platform\'s sample request' }
  },
  examples: [{
    urn: 'URN0001', customerId: 'CUST1', merchantName: 'Corner Shop', terminalId: 'T1', mcc: '5411', systemTraceAuditNumber: '162',
    cardNetwork: 'RUPAY', channel: 'POS', merchantId: 'M0001', transactionAmount: '1250', transactionReferenceNumber: 'TRN-0001',
    currencyCode: '356', last4Digits: '4321'
  }]
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
