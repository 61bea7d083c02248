// The prepaid platform's responseCode table (spec "Wallet-to-wallet transfer response codes"), with a
// family per code. The simulators keep their own copy of the table (src/sim/spec-values.ts).

export type WalletDeclineFamily =
  | 'invalid_request'
  | 'credentials' // headers, secure code, checksum, source IP
  | 'unknown_party' // sender or receiver not found
  | 'insufficient_funds'
  | 'duplicate' // clientTxnId already used
  | 'not_allowed' // operation, product or programme limit
  | 'system'
  | 'unknown'

export const WALLET_CODES: Readonly<Record<string, string>> = Object.freeze({
  '00': 'SUCCESS',
  1030: 'INVALID MESSAGE',
  1031: 'INVALID BANK ID',
  1032: 'INVALID_CLIENT_CHANNEL',
  1045: 'UNABLE TO PROCESS REQUEST CAUSE OF UNKNOWN FIELD',
  1049: 'INVALID SECURE CODE',
  1051: 'CHECKSUM FAILURE',
  1052: 'SYSTEM_ERROR',
  1054: 'DUPLICATE REQUEST',
  1055: 'MALFORMED_REQUEST',
  1080: 'IP_NOT_ALLOWED',
  1081: 'OPERATION NOT ALLOWED',
  1085: 'PRODUCT NOT ALLOWED',
  1088: 'INVALID REQUEST DATE format',
  1093: 'INVALID CLIENT TXN ID',
  1104: 'TRANSACTION AMOUNT MISMATCH',
  1107: 'SENDER CARD NOT FOUND',
  1110: 'RECEIVER CARD NOT FOUND',
  1262: 'CLIENT ID NOT PRESENT IN THE REQUEST',
  1264: 'BANK ID NOT PRESENT IN THE REQUEST',
  1310: 'XCONSUMERKEY NOT PRESENT IN THE REQUEST',
  1311: 'SECURE CODE NOT PRESENT IN REQUEST',
  1320: 'REQUEST_DATETIME_IS_MANDATORY',
  6900: 'SENDER ACCOUNT NUMBER NULL OR EMPTY',
  6901: 'RECEIVER ACCOUNT NUMBER NULL OR EMPTY',
  6902: 'SENDER RECEIVER INVALID ACCOUNT NUMBER',
  6905: 'INVALID ACCOUNT NUMBER IN REQUEST',
  6906: 'SENDER IMPL ID MISMATCH',
  6907: 'RECEIVER IMPL ID MISMATCH',
  6909: 'SENDER CUSTOMER NOT FOUND',
  6910: 'RECEIVER CUSTOMER NOT FOUND',
  6911: 'INVALID RESERVED FIELD 1',
  6912: 'INVALID RESERVED FIELD 2',
  6913: 'INVALID RESERVED FIELD 3',
  6914: 'INVALID RESERVED FIELD 4',
  6915: 'INVALID RESERVED FIELD 5',
  6916: 'INVALID RESERVED FIELD 6',
  6917: 'MORE THAN ONE CUSTOMER IDENTIFIER NOT ALLOWED FOR SENDER',
  6918: 'MORE THAN ONE CUSTOMER IDENTIFIER NOT ALLOWED FOR RECEIVER',
  6919: 'TRANSFER AMOUNT MORE THAN AVAILABLE BALANCE OF SENDER',
  6920: 'SOURCE ACCOUNT TYPE MUST BE A NUMBER WITH MAX LENGTH 2',
  6921: 'SENDER TRANSACTION AMOUNT IS ZERO OR INVALID',
  6922: 'SENDER URN LENGTH EXCEEDED',
  6923: 'SENDER ACCOUNT NUMBER LENGTH EXCEEDED',
  6924: 'SENDER TRANSACTION AMOUNT LENGTH EXCEEDED',
  6925: 'SENDER SOURCE ACCOUNT LENGTH EXCEEDED',
  6926: 'SENDER ACCOUNT NUMBER CURRENCY LENGTH EXCEEDED',
  6927: 'RECEIVER URN LENGTH EXCEEDED',
  6928: 'RECEIVER TRANSACTION AMOUNT LENGTH EXCEEDED',
  6929: 'RECEIVER ACCOUNT NUMBER LENGTH EXCEEDED',
  6930: 'SENDER CUSTOMER ID LENGTH EXCEEDED',
  6931: 'RECEIVER CUSTOMER ID LENGTH EXCEEDED',
  6932: 'SENDER RESERVED FIELD LENGTH EXCEEDED',
  6933: 'RECEIVER RESERVED FIELD LENGTH EXCEEDED',
  6934: 'RECEIVER TRANSACTION AMOUNT IS ZERO OR INVALID',
  6936: 'FIELD OUT OF RANGE FOR DATA TYPE',
  7948: 'PROGRAM LEVEL OUTSTANDING BALANCE BREACHED',
  10027: 'CURRENCY NOT PRESENT',
  303178: 'Request DateTime Length should not be more than 14 characters',
  303193: 'Message Code cannot be Blank, Empty or null'
})

// Codes outside the table that the platform uses for credentials (spec Authentication 6 and 7).
const CREDENTIALS = new Set(['406', '407', '1031', '1032', '1049', '1051', '1080', '1262', '1264', '1310', '1311'])
const UNKNOWN_PARTY = new Set(['1107', '1110', '6909', '6910'])
const NOT_ALLOWED = new Set(['1081', '1085', '7948'])

export function walletCodeFamily (code: string): WalletDeclineFamily {
  if (CREDENTIALS.has(code)) return 'credentials'
  if (UNKNOWN_PARTY.has(code)) return 'unknown_party'
  if (NOT_ALLOWED.has(code)) return 'not_allowed'
  if (code === '6919') return 'insufficient_funds'
  if (code === '1054') return 'duplicate'
  if (code === '1052') return 'system'
  return Object.hasOwn(WALLET_CODES, code) ? 'invalid_request' : 'unknown'
}

export function walletCodeDescription (code: string): string {
  return WALLET_CODES[code] ?? 'UNKNOWN RESPONSE CODE'
}

/** "0", "00" and 0 are success; other codes are compared as the table writes them. */
export function normaliseWalletCode (v: string | number): string {
  const s = String(v).trim()
  return /^0+$/.test(s) ? '00' : s
}
