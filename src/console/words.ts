// What the codes and words of a decision mean, in plain words beside the code (docs/api/external-auth.md,
// "Order of checks"): a support agent reads "declined: not enough money" next to 51.
import { RESPONSE_CODES } from '../domain/request.js'

const CODE_TEXT: Record<string, string> = {
  '00': 'approved',
  '05': 'declined (do not honour)',
  '14': 'declined: card or customer not known',
  '34': 'declined: suspected fraud',
  '41': 'declined: card reported lost',
  '43': 'declined: card reported stolen',
  '51': 'declined: not enough money',
  '61': 'declined: over an amount limit',
  '65': 'declined: over a count limit'
}

const REASON_TEXT: Record<string, string> = {
  approved: 'every check passed and the amount was held',
  unknown_urn: 'no customer with this urn',
  customer_blocked: 'the customer is BLOCKED',
  customer_closed: 'the customer is CLOSED',
  card_lost: 'the card is LOST',
  card_stolen: 'the card is STOLEN',
  card_blocked: 'the card is BLOCKED',
  card_unknown: 'the customer has cards and this is none of them',
  rule: 'a rule of the rule set declined it',
  limit: 'a limit rule: this transaction would take the window over its max',
  insufficient_funds: 'the debit amount was more than the available balance',
  conflict: 'the same reference was sent before with another amount or card',
  deadline: 'no decision before the deadline: answered 05, nothing held',
  control_off: 'the cardholder switched this kind of use off',
  control_limit: 'a card control\'s amount limit would be passed'
}

/** `51 NO_SUFFICIENT_FUNDS` → "declined: not enough money" */
export function codeText (code: string): string {
  return CODE_TEXT[code] ?? 'a code this console does not know'
}

/** the table's word for a code (the answer's responseDescription) */
export function codeWord (code: string): string {
  return Object.hasOwn(RESPONSE_CODES, code) ? RESPONSE_CODES[code as keyof typeof RESPONSE_CODES] : ''
}

export function reasonText (reason: string): string {
  return REASON_TEXT[reason] ?? ''
}

export const REASONS = Object.keys(REASON_TEXT)
export const CODES = Object.keys(CODE_TEXT)

/** "1250" minor units → "1,250" (amounts stay in minor units, as everywhere in extauth) */
export function minor (v: number | string | null | undefined): string {
  if (v === null || v === undefined || v === '') return '-'
  const n = typeof v === 'number' ? v : Number(v)
  return Number.isSafeInteger(n) ? n.toLocaleString('en-US') : String(v)
}
