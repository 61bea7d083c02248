// The payment gateway adapter (spec A): authorize, pre-auth completion and cancellation, generate, resend
// and verify OTP. Callers use our field names; the wire keeps the spec's own spellings (merchantRefernceNo
// in authorize, verify and capture; merchantReferenceNo and currencCode in generate OTP).
import { parseCaptureAnswer, parseOtpAnswer, parseTxnAnswer } from './parse.js'
import type { GatewayDeclined, OtpAccepted, TxnApproval } from './parse.js'
import { createPartyClient } from '../transport/http.js'
import type { CallOptions } from '../transport/http.js'
import { callObserver } from '../transport/log-outcome.js'
import { partyCaller, type PartyCall } from '../transport/party-call.js'
import { parseBaseUrl, requireText, resolveHttpOptions } from '../transport/options.js'
import type { AdapterDeps, HttpOptions, ResolvedHttpOptions } from '../transport/options.js'
import { RequestChecks } from '../transport/request-checks.js'
import type { Answer, Failed, Ok } from '../transport/result.js'

export type { GatewayDeclined, OtpAccepted, TxnApproval } from './parse.js'
export type { GatewayDeclineFamily } from './codes.js'

export const GATEWAY_PATHS = Object.freeze({
  authorize: '/saleservice/api/v1/authorize',
  generateOtp: '/authentication/api/v1/generateOTP',
  verifyOtp: '/authentication/api/v1/verifyOtp'
})

export const PRE_AUTH_COMPLETION_ACTION = 'SERVICE_POST_MPI_PRE_AUTH_COMPLETION'
export const PRE_AUTH_TRANSACTION_TYPE_CODE = '9001'
/** The spec names only the completion's action; this default is ours and can be replaced by an option. */
export const DEFAULT_PRE_AUTH_CANCELLATION_ACTION = 'SERVICE_POST_MPI_PRE_AUTH_CANCELLATION'

export interface GatewayOptions extends HttpOptions {
  baseUrl: string
  apiKey: string
  pgInstanceId: string
  merchantId: string
  /** envelope version, four dot-separated numbers */
  version: string
  preAuthCancellationAction?: string
  /** transactionTypeCode sent with a cancellation; defaults to the completion's 9001 */
  preAuthCancellationTypeCode?: string
}

export const GATEWAY_HTTP_DEFAULTS: ResolvedHttpOptions = Object.freeze({
  connectTimeoutMs: 1000,
  headersTimeoutMs: 5000,
  bodyTimeoutMs: 5000,
  totalTimeoutMs: 8000,
  connections: 8,
  keepAliveTimeoutMs: 4000,
  responseBytesMax: 256 * 1024,
  connectRetriesMax: 1
})

export interface GenerateOtpInput {
  merchantReferenceNo: string
  /** card number as the gateway expects it (the spec calls it masked) */
  pan: string
  /** MMYYYY */
  expDate: string
  cvd2: string
  /** integer, minor units; sent as a string of digits */
  amount: number
  /** ISO 4217 numeric; sent as currencCode */
  currencyCode: string
  nameOnCard?: string
  email?: string
  orderDesc?: string
  mobileNumber?: string
  cardHolderStatus?: string
  httpAccept?: string
  browserUserAgent?: string
  customerIpAddress?: string
  ext1?: string
  ext2?: string
  amountInINR?: string
  /** integer, minor units */
  originalAmount?: number
  purposeOfAuthentication?: string
  tokenAuthenticationValue?: string
}

export interface ResendOtpInput {
  merchantReferenceNo: string
  mobileNumber?: string
  email?: string
}

export interface VerifyOtpInput {
  merchantReferenceNo: string
  pgTransactionId: string
  otp: string
}

export interface AuthorizeInput {
  merchantReferenceNo: string
  pgTransactionId: string
}

export interface PreAuthInput {
  merchantReferenceNo: string
  pgTransactionId: string
  /** integer, minor units, for a partial completion; not in the spec's field list, so sent only when given */
  amount?: number
}

export type AuthorizeResult = Ok<TxnApproval> | GatewayDeclined | Failed
export type PreAuthResult = Ok<Partial<TxnApproval>> | GatewayDeclined | Failed
export type OtpResult = Ok<OtpAccepted> | GatewayDeclined | Failed

export interface GatewayAdapter {
  authorize (input: AuthorizeInput, call?: CallOptions): Promise<AuthorizeResult>
  preAuthCompletion (input: PreAuthInput, call?: CallOptions): Promise<PreAuthResult>
  preAuthCancellation (input: PreAuthInput, call?: CallOptions): Promise<PreAuthResult>
  generateOtp (input: GenerateOtpInput, call?: CallOptions): Promise<OtpResult>
  resendOtp (input: ResendOtpInput, call?: CallOptions): Promise<OtpResult>
  verifyOtp (input: VerifyOtpInput, call?: CallOptions): Promise<OtpResult>
  close (): Promise<void>
}

const EXP_DATE = /^(0[1-9]|1[0-2])\d{4}$/
const CURRENCY = /^\d{3}$/
const VERSION = /^\d+\.\d+\.\d+\.\d+$/

function put (body: Record<string, string>, name: string, value: string | number | undefined): void {
  if (value !== undefined) body[name] = String(value)
}

export function createGatewayAdapter (options: GatewayOptions, deps: AdapterDeps): GatewayAdapter {
  const party = 'gateway'
  const base = parseBaseUrl(party, requireText(party, 'baseUrl', options.baseUrl))
  const apiKey = requireText(party, 'apiKey', options.apiKey)
  const pgInstanceId = requireText(party, 'pgInstanceId', options.pgInstanceId)
  const merchantId = requireText(party, 'merchantId', options.merchantId)
  const version = requireText(party, 'version', options.version, VERSION)
  const cancelAction = requireText(party, 'preAuthCancellationAction', options.preAuthCancellationAction ?? DEFAULT_PRE_AUTH_CANCELLATION_ACTION)
  const cancelTypeCode = requireText(party, 'preAuthCancellationTypeCode', options.preAuthCancellationTypeCode ?? PRE_AUTH_TRANSACTION_TYPE_CODE)
  const log = deps.logger.child({ adapter: party })
  const client = createPartyClient(party, base, resolveHttpOptions(party, options, GATEWAY_HTTP_DEFAULTS), log)
  const post = partyCaller(client, log, callObserver(party, deps))

  // Pre-auth capture carries the key as header.Authorization; every other call as header["x-api-key"].
  function envelope (keyField: 'x-api-key' | 'Authorization', body: Record<string, string>): object {
    return { header: { version, pgInstanceId, [keyField]: apiKey }, body }
  }

  /** A gateway call: its body inside the envelope whose header carries the key as `key` names it. */
  async function send<R extends Answer> (
    c: Omit<PartyCall<R>, 'headers' | 'body'> & { key: 'x-api-key' | 'Authorization', body: Record<string, string> }, call?: CallOptions
  ): Promise<R | Failed> {
    return await post({ op: c.op, path: c.path, headers: { pgInstanceId }, body: envelope(c.key, c.body), parse: c.parse, refs: c.refs }, call)
  }

  function capture (op: string, action: string, typeCode: string, input: PreAuthInput, call?: CallOptions): Promise<PreAuthResult> {
    new RequestChecks()
      .text('merchantReferenceNo', input.merchantReferenceNo)
      .text('pgTransactionId', input.pgTransactionId)
      .optionalAmount('amount', input.amount)
      .done()
    const body: Record<string, string> = {
      merchantId,
      merchantRefernceNo: input.merchantReferenceNo,
      pgTransactionId: input.pgTransactionId,
      action,
      transactionTypeCode: typeCode
    }
    put(body, 'amount', input.amount)
    const refs = { merchantReferenceNo: input.merchantReferenceNo, pgTransactionId: input.pgTransactionId }
    return send({ op, path: GATEWAY_PATHS.authorize, key: 'Authorization', body, parse: parseCaptureAnswer, refs }, call)
  }

  return {
    async authorize (input, call) {
      new RequestChecks().text('merchantReferenceNo', input.merchantReferenceNo).text('pgTransactionId', input.pgTransactionId).done()
      const body = { pgInstanceId, merchantId, merchantRefernceNo: input.merchantReferenceNo, pgTransactionId: input.pgTransactionId }
      const refs = { merchantReferenceNo: input.merchantReferenceNo, pgTransactionId: input.pgTransactionId }
      return send({ op: 'authorize', path: GATEWAY_PATHS.authorize, key: 'x-api-key', body, parse: parseTxnAnswer, refs }, call)
    },

    async preAuthCompletion (input, call) {
      return capture('preAuthCompletion', PRE_AUTH_COMPLETION_ACTION, PRE_AUTH_TRANSACTION_TYPE_CODE, input, call)
    },

    async preAuthCancellation (input, call) {
      return capture('preAuthCancellation', cancelAction, cancelTypeCode, input, call)
    },

    async generateOtp (input, call) {
      new RequestChecks()
        .text('merchantReferenceNo', input.merchantReferenceNo)
        .text('pan', input.pan, /^[0-9Xx*]{12,19}$/, 'must be 12 to 19 digits (masking allowed)')
        .text('expDate', input.expDate, EXP_DATE, 'must be MMYYYY')
        .text('cvd2', input.cvd2, /^\d{3,4}$/, 'must be 3 or 4 digits')
        .amount('amount', input.amount)
        .text('currencyCode', input.currencyCode, CURRENCY, 'must be 3 digits')
        .optionalAmount('originalAmount', input.originalAmount)
        .done()
      const body: Record<string, string> = {
        merchantId,
        pan: input.pan,
        expDate: input.expDate,
        cvd2: input.cvd2,
        currencCode: input.currencyCode,
        amount: String(input.amount),
        merchantReferenceNo: input.merchantReferenceNo
      }
      put(body, 'nameOnCard', input.nameOnCard)
      put(body, 'email', input.email)
      put(body, 'orderDesc', input.orderDesc)
      put(body, 'mobileNumber', input.mobileNumber)
      put(body, 'cardHolderStatus', input.cardHolderStatus)
      put(body, 'http_accept', input.httpAccept)
      put(body, 'browser_user_agent', input.browserUserAgent)
      put(body, 'customerIpAddress', input.customerIpAddress)
      put(body, 'ext1', input.ext1)
      put(body, 'ext2', input.ext2)
      put(body, 'amountInINR', input.amountInINR)
      put(body, 'originalAmount', input.originalAmount)
      put(body, 'purposeOfAuthentication', input.purposeOfAuthentication)
      put(body, 'tokenAuthenticationValue', input.tokenAuthenticationValue)
      return send({
        op: 'generateOtp', path: GATEWAY_PATHS.generateOtp, key: 'x-api-key', body, parse: parseOtpAnswer, refs: { merchantReferenceNo: input.merchantReferenceNo }
      }, call)
    },

    async resendOtp (input, call) {
      new RequestChecks().text('merchantReferenceNo', input.merchantReferenceNo).done()
      const body: Record<string, string> = { merchantId, merchantReferenceNo: input.merchantReferenceNo }
      put(body, 'mobileNumber', input.mobileNumber)
      put(body, 'email', input.email)
      return send({
        op: 'resendOtp', path: GATEWAY_PATHS.generateOtp, key: 'x-api-key', body, parse: parseOtpAnswer, refs: { merchantReferenceNo: input.merchantReferenceNo }
      }, call)
    },

    async verifyOtp (input, call) {
      new RequestChecks()
        .text('merchantReferenceNo', input.merchantReferenceNo)
        .text('pgTransactionId', input.pgTransactionId)
        .text('otp', input.otp, /^\d{4,8}$/, 'must be 4 to 8 digits')
        .done()
      const body = {
        pgInstanceId,
        merchantId,
        merchantRefernceNo: input.merchantReferenceNo,
        otp: input.otp,
        pgTransactionId: input.pgTransactionId
      }
      return send({
        op: 'verifyOtp', path: GATEWAY_PATHS.verifyOtp, key: 'x-api-key', body, parse: parseOtpAnswer,
        refs: { merchantReferenceNo: input.merchantReferenceNo, pgTransactionId: input.pgTransactionId }
      }, call)
    },

    close: () => client.close()
  }
}
