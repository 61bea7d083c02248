// The External Authorization body (spec "External Authorization request"). Sizes are maxima; numeric
// fields are digit strings ("162" is a valid numeric(6)); an optional field sent as "" counts as absent.
// Unknown extra fields are accepted and ignored.
import { CHANNELS } from '../domain/channels.js'

export { CHANNELS }

const digits = (max: number) => ({ type: 'string', pattern: `^[0-9]{1,${max}}$` }) as const
const optDigits = (max: number) => ({ type: 'string', pattern: `^[0-9]{0,${max}}$` }) as const
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const
const optText = (max: number) => ({ type: 'string', maxLength: max }) as const

export const EXTERNAL_AUTH_PATH = '/api/v1/externalAuth'

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

export const answerSchema = {
  type: 'object',
  required: ['responseCode', 'responseDescription', 'responseDateTime', 'transactionAmount', 'currencyCode'],
  properties: {
    responseCode: { type: 'string' },
    responseDescription: { type: 'string' },
    responseDateTime: { type: 'string' },
    transactionAmount: { type: 'string' },
    currencyCode: { type: 'string' }
  }
} as const
