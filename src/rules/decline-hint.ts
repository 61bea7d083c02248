// What to write instead of a decline code the endpoint does not answer. Codes are chosen by meaning, so the
// hint is too: a code one digit away from a valid one means something else (57 is not 51), and is never
// suggested for that. A common ISO 8583 code whose meaning one of ours carries names that one; any other
// code gets the list of ours with their meanings.
import { RESPONSE_CODES } from '../domain/request.js'

/** Common ISO 8583 codes outside the endpoint's table: their meaning, and ours that carries it if one does. */
const OTHER_CODES: Readonly<Record<string, { meaning: string, ours?: keyof typeof RESPONSE_CODES }>> = {
  '04': { meaning: 'pick up card' },
  '07': { meaning: 'pick up card, special condition', ours: '34' },
  12: { meaning: 'invalid transaction' },
  13: { meaning: 'invalid amount' },
  15: { meaning: 'no such issuer' },
  54: { meaning: 'expired card' },
  55: { meaning: 'incorrect PIN' },
  56: { meaning: 'no card record', ours: '14' },
  57: { meaning: 'transaction not permitted to cardholder' },
  58: { meaning: 'transaction not permitted to terminal' },
  59: { meaning: 'suspected fraud', ours: '34' },
  62: { meaning: 'restricted card' },
  63: { meaning: 'security violation' },
  75: { meaning: 'PIN tries exceeded' },
  91: { meaning: 'issuer unavailable' }
}

export function declineHint (given: unknown, allowed: readonly string[]): string {
  const ours = allowed.map((c) => `${c} ${(RESPONSE_CODES as Record<string, string | undefined>)[c] ?? ''}`.trim()).join(', ')
  const other = typeof given === 'string' ? OTHER_CODES[given] : undefined
  if (other === undefined) return `valid, by meaning: ${ours}`
  if (other.ours !== undefined) return `${String(given)} (${other.meaning}) is answered here as ${other.ours} ${RESPONSE_CODES[other.ours]}; valid, by meaning: ${ours}`
  return `${String(given)} (${other.meaning}) has no code of its own here: 05 DO_NOT_HONOR is the general refusal; valid, by meaning: ${ours}`
}
