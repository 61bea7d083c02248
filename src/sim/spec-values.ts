// The interface specification's values, written out here for the simulators: paths, actions and the code
// tables. The simulators never take them from the adapters, so an adapter that sends to a wrong path or
// reads a code wrongly disagrees with its simulator and fails its tests.

/** spec A, endpoints 1 to 4 */
export const SPEC_GATEWAY_PATHS = Object.freeze({
  authorize: '/saleservice/api/v1/authorize',
  generateOtp: '/authentication/api/v1/generateOTP',
  verifyOtp: '/authentication/api/v1/verifyOtp'
})
/** spec A, endpoint 2: the pre-auth capture's action */
export const SPEC_PRE_AUTH_COMPLETION_ACTION = 'SERVICE_POST_MPI_PRE_AUTH_COMPLETION'
/** the spec names no cancellation action: this is the simulator's, replaceable by an option */
export const SIM_PRE_AUTH_CANCELLATION_ACTION = 'SERVICE_POST_MPI_PRE_AUTH_CANCELLATION'

/** spec B, endpoint 5 */
export const SPEC_RISK_PATH = '/analyse/request'

/** spec C, endpoints 6 to 8 */
export const SPEC_PREPAID_PATHS = Object.freeze({
  encrypt: '/api/v2/encrypt',
  decrypt: '/api/v2/decrypt',
  fundTransfer: '/uat/sbx/api/onboarding/v2/fundTransfer'
})
/** the spec gives no Unload path: this is the simulator's, replaceable by an option (PREPAID_UNLOAD_PATH) */
export const SIM_UNLOAD_PATH = '/uat/sbx/api/onboarding/v2/unload'
/** spec C, "Encrypt request for unloading a wallet" */
export const SPEC_UNLOAD_MESSAGE_CODE = '3450'

/** spec D, endpoint 9, and the request's channel values */
export const SPEC_EXTERNAL_AUTH_PATH = '/api/v1/externalAuth'
export const SPEC_CHANNELS = Object.freeze(['POS', 'ECOM', 'ATM', 'POS-Contactless'] as const)

/** spec "Codes for generate/resend OTP and authorization" and "Codes for verify OTP" (text cut in the spec completed) */
const GATEWAY_CODES: Readonly<Record<string, string>> = Object.freeze({
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
  return GATEWAY_CODES[code] ?? GATEWAY_CODES[code.padStart(2, '0')] ?? ''
}

/** spec "Wallet-to-wallet transfer response codes" */
const WALLET_CODES: Readonly<Record<string, string>> = Object.freeze({
  '00': 'SUCCESS',
  406: 'Not Authenticated',
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
  6909: 'SENDER CUSTOMER NOT FOUND',
  6910: 'RECEIVER CUSTOMER NOT FOUND',
  6911: 'INVALID RESERVED FIELD 1',
  6917: 'MORE THAN ONE CUSTOMER IDENTIFIER NOT ALLOWED FOR SENDER',
  6918: 'MORE THAN ONE CUSTOMER IDENTIFIER NOT ALLOWED FOR RECEIVER',
  6919: 'TRANSFER AMOUNT MORE THAN AVAILABLE BALANCE OF SENDER',
  6920: 'SOURCE ACCOUNT TYPE MUST BE A NUMBER WITH MAX LENGTH 2',
  6921: 'SENDER TRANSACTION AMOUNT IS ZERO OR INVALID',
  6934: 'RECEIVER TRANSACTION AMOUNT IS ZERO OR INVALID',
  6936: 'FIELD OUT OF RANGE FOR DATA TYPE',
  7948: 'PROGRAM LEVEL OUTSTANDING BALANCE BREACHED',
  10027: 'CURRENCY NOT PRESENT',
  303178: 'Request DateTime Length should not be more than 14 characters',
  303193: 'Message Code cannot be Blank, Empty or null'
})

export function walletCodeText (code: string): string {
  return WALLET_CODES[code] ?? 'UNKNOWN RESPONSE CODE'
}

/** yyyyMMddHHmmss in UTC (the spec's requestDateTime and responseDateTime) */
export function specTimestamp (ms: number): string {
  return new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14)
}
