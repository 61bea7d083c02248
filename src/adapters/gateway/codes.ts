// The gateway's error codes (spec "Codes for generate/resend OTP and authorization" and "Codes for verify
// OTP") sorted into families, so callers branch on meaning rather than on numbers.

export type GatewayDeclineFamily =
  | 'invalid_request' // 01, 02, 07, 13, 401, 402, 408, 454: our request was wrong; do not repeat it as is
  | 'credentials' // 406, 407: key, signature or source IP refused
  | 'authentication' // 409: authenticationValue invalid or duplicate
  | 'issuer_declined' // 41..65, 110, 120: the issuer said no
  | 'duplicate' // 96 PREVIOUSLY AUTHORIZED / PREVIOUSLY DECLINED: a repeated authorize
  | 'otp_invalid' // 450
  | 'otp_expired' // 451
  | 'otp_exhausted' // 452: verification attempts used up
  | 'otp_resend_exhausted' // 453
  | 'not_eligible' // 501..508: EMI, SI and token programmes
  | 'system' // 91, 92, 96 SYSTEM ERROR, 399, 400
  | 'unknown'

const FAMILY_BY_CODE = new Map<number, GatewayDeclineFamily>([
  ...[1, 2, 7, 13, 401, 402, 408, 454].map((c) => [c, 'invalid_request'] as const),
  ...[406, 407].map((c) => [c, 'credentials'] as const),
  [409, 'authentication'],
  ...[41, 42, 43, 51, 54, 55, 57, 58, 59, 61, 62, 65, 110, 120].map((c) => [c, 'issuer_declined'] as const),
  [450, 'otp_invalid'],
  [451, 'otp_expired'],
  [452, 'otp_exhausted'],
  [453, 'otp_resend_exhausted'],
  ...[501, 502, 503, 504, 505, 506, 507, 508].map((c) => [c, 'not_eligible'] as const),
  ...[91, 92, 96, 399, 400].map((c) => [c, 'system'] as const)
])

/** Failures at the network or gateway that a later attempt may not meet. */
const RETRYABLE = new Set([91, 96, 399])

export interface GatewayCodeMeaning {
  family: GatewayDeclineFamily
  retryable: boolean
  /** for 96 on a repeated authorize: what the first call had decided */
  previously?: 'authorized' | 'declined'
}

/** Code 96 has three meanings; only the description tells a duplicate from a system error. */
export function gatewayCodeMeaning (code: string, description: string): GatewayCodeMeaning {
  const n = /^\d+$/.test(code) ? Number(code) : Number.NaN
  if (n === 96) {
    const m = /previously\s+(authori[sz]ed|declined)/i.exec(description)
    if (m !== null) {
      return { family: 'duplicate', retryable: false, previously: m[1]?.toLowerCase() === 'declined' ? 'declined' : 'authorized' }
    }
  }
  return { family: FAMILY_BY_CODE.get(n) ?? 'unknown', retryable: RETRYABLE.has(n) }
}

/** The tables' words for the codes, for answers that leave the description empty. */
export const GATEWAY_CODE_TEXT: Readonly<Record<string, string>> = Object.freeze({
  '00': 'authorized by issuing bank',
  '01': 'Missing Parameter',
  '02': 'Invalid Command',
  '07': 'Invalid Parameter',
  13: 'Amount Error',
  41: 'DECLINED (lost card)',
  42: 'DECLINED (no account)',
  43: 'DECLINED (stolen)',
  51: 'NON SUFFICIENT FUNDS',
  54: 'EXPIRED CARD',
  55: 'WRONG PIN',
  57: 'DECLINED (cardholder not allowed)',
  58: 'DECLINED (terminal not allowed)',
  59: 'DECLINED (fraud)',
  61: 'DECLINED (exceeds with)',
  62: 'DECLINED',
  65: 'DECLINED (exceeds frequency)',
  91: 'ERROR',
  92: 'NO ROUTING AVAILABLE',
  96: 'SYSTEM ERROR',
  110: 'NO ACCT',
  120: 'ACCT CLOSED',
  399: 'SYSTEM UNAVAILABLE',
  400: 'General Error',
  406: 'Not Authenticated',
  407: 'Not Authorized',
  409: 'Invalid authenticationValue',
  450: 'Invalid OTP',
  451: 'Expired OTP',
  452: 'Exhausted OTP verification',
  453: 'Exhausted OTP resend count',
  454: 'Duplicate requestID'
})

export function gatewayCodeText (code: string): string {
  return GATEWAY_CODE_TEXT[code] ?? GATEWAY_CODE_TEXT[code.padStart(2, '0')] ?? ''
}
