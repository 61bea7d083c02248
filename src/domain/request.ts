// The External Authorization request as the prepaid platform sends it (spec "External Authorization").
// Every field arrives as a string; sizes are maxima. Unknown extra fields are accepted and ignored.
export interface AuthRequest {
  customerId?: string
  urn: string
  merchantName?: string
  terminalId: string
  mcc?: string
  systemTraceAuditNumber: string
  cardNetwork: string
  channel: string
  merchantId?: string
  transactionAmount: string
  fee?: string
  transactionReferenceNumber: string
  currencyCode?: string
  last4Digits: string
  originalRrn?: string
  /** the spelling used by the platform's sample request */
  orignialRrn?: string
  billingCurrency?: string
  billingAmount?: string
  entityId?: string
  [extra: string]: unknown
}

/** Response codes of the External Authorization table, with the table's word for each. */
export const RESPONSE_CODES = {
  '00': 'TRANSACTION_APPROVED',
  '05': 'DO_NOT_HONOR',
  '14': 'CARD_NOT_FOUND',
  '34': 'SUSPECTED_FRAUD',
  '41': 'LOST_CARD',
  '43': 'STOLEN_CARD',
  '51': 'NO_SUFFICIENT_FUNDS',
  '61': 'EXCEEDS_WITHDRAWAL_AMOUNT_LIMIT',
  '65': 'EXCEEDS_WITHDRAWAL_FREQUENCY_LIMIT'
} as const

export type ResponseCode = keyof typeof RESPONSE_CODES

export function isResponseCode (code: unknown): code is ResponseCode {
  return typeof code === 'string' && Object.hasOwn(RESPONSE_CODES, code)
}
