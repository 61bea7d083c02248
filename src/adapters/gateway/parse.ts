// Schemas and parsers for the gateway's two answer shapes: the transaction shape (status 50020 and
// pgErrorCode, for authorize and pre-auth capture) and the OTP shape (status word and errorcode, for the
// OTP calls, and a sample form of the pre-auth capture answer).
import { gatewayCodeMeaning, gatewayCodeText } from './codes.js'
import type { GatewayDeclineFamily } from './codes.js'
import type { Parsed } from '../transport/http.js'
import type { DeclinedBase, Ok } from '../transport/result.js'
import { asCode, asId, asText, codeLike, compact, compile, idLike, isZeroCode, optionalText, schemaProblem } from '../transport/schema.js'

export const STATUS_SUCCESS = '50020'

export type GatewayDeclined = DeclinedBase<GatewayDeclineFamily> & {
  /** transaction status or OTP status word, as sent */
  status: string
  /** set on a repeated authorize (code 96): what the first call had decided */
  previously?: 'authorized' | 'declined'
  pgTransactionId?: string
}

export interface TxnApproval {
  transactionId: string
  status: string
  approvalCode?: string
  rrn?: string
  schemeTransactionId?: string
  creditDebitCardFlag?: string
  merchantReferenceNo?: string
}

export interface OtpAccepted {
  pgTransactionId?: string
  /** minutes the OTP stays valid (generate and resend) */
  validityPeriodMin?: number
  /** verify only */
  authResponseCode?: string
  tranCtxId?: string
}

interface TxnWire {
  transactionId?: string | number
  status: string | number
  pgErrorCode: string | number
  pgErrorDetail?: string | null
  approvalCode?: string | number | null
  rrn?: string | number | null
  schemeTransactionId?: string | number | null
  creditDebitCardFlag?: string | null
  merchantReferenceNo?: string | null
}

interface OtpWire {
  status: string
  errorcode: string | number
  errormsg?: string | null
  validityPeriod?: string | number | null
  pgTransactionId?: string | number | null
  authResponseCode?: string | number | null
  tranCtxId?: string | number | null
  transactionId?: string | number
  approvalCode?: string | number | null
  rrn?: string | number | null
  schemeTransactionId?: string | number | null
  merchantReferenceNo?: string | null
}

const nullableId = { anyOf: [idLike, { type: 'null' }] }

const validateTxn = compile<TxnWire>({
  type: 'object',
  required: ['status', 'pgErrorCode'],
  properties: {
    transactionId: idLike,
    status: codeLike,
    pgErrorCode: codeLike,
    pgErrorDetail: optionalText,
    approvalCode: nullableId,
    rrn: nullableId,
    schemeTransactionId: nullableId,
    creditDebitCardFlag: optionalText,
    merchantReferenceNo: optionalText
  }
})

const validateOtp = compile<OtpWire>({
  type: 'object',
  required: ['status', 'errorcode'],
  properties: {
    status: { type: 'string', minLength: 1, maxLength: 20 },
    errorcode: codeLike,
    errormsg: optionalText,
    validityPeriod: { anyOf: [{ type: ['string', 'integer'], pattern: '^\\d{1,2}$', minimum: 0, maximum: 99 }, { type: 'null' }] },
    pgTransactionId: nullableId,
    authResponseCode: nullableId,
    tranCtxId: nullableId,
    transactionId: idLike,
    approvalCode: nullableId,
    rrn: nullableId,
    schemeTransactionId: nullableId,
    merchantReferenceNo: optionalText
  }
})

function declined (code: string, detail: string, status: string, pgTransactionId?: string): GatewayDeclined {
  const description = detail === '' ? gatewayCodeText(code) : detail
  const meaning = gatewayCodeMeaning(code, description)
  const d: GatewayDeclined = { kind: 'declined', code, description, status, family: meaning.family, retryable: meaning.retryable }
  if (meaning.previously !== undefined) d.previously = meaning.previously
  if (pgTransactionId !== undefined) d.pgTransactionId = pgTransactionId
  return d
}

function txnFrom (w: TxnWire): Parsed<Ok<TxnApproval> | GatewayDeclined> {
  const status = asCode(w.status)
  const code = asCode(w.pgErrorCode)
  const transactionId = asId(w.transactionId)
  if (status === STATUS_SUCCESS && isZeroCode(code)) {
    if (transactionId === undefined) return { kind: 'unparsable', detail: '/transactionId required on success' }
    return compact({
      kind: 'ok' as const,
      transactionId,
      status,
      approvalCode: asId(w.approvalCode),
      rrn: asId(w.rrn),
      schemeTransactionId: asId(w.schemeTransactionId),
      creditDebitCardFlag: asText(w.creditDebitCardFlag),
      merchantReferenceNo: asText(w.merchantReferenceNo)
    })
  }
  // a failed status with no error code still must not read as success
  return declined(isZeroCode(code) ? status : code, asText(w.pgErrorDetail) ?? '', status, transactionId)
}

function otpFrom (w: OtpWire): Parsed<Ok<OtpAccepted> | GatewayDeclined> {
  const status = w.status.trim().toLowerCase()
  const code = asCode(w.errorcode)
  const pgTransactionId = asId(w.pgTransactionId)
  if (status === 'success' && isZeroCode(code)) {
    const validity = w.validityPeriod === null || w.validityPeriod === undefined ? undefined : Number(w.validityPeriod)
    return compact({
      kind: 'ok' as const,
      pgTransactionId,
      validityPeriodMin: validity,
      authResponseCode: asId(w.authResponseCode),
      tranCtxId: asId(w.tranCtxId)
    })
  }
  if (status !== 'success' && status !== 'failed') return { kind: 'unparsable', detail: '/status not success or failed' }
  return declined(isZeroCode(code) ? 'failed' : code, asText(w.errormsg) ?? '', status, pgTransactionId)
}

export function parseTxnAnswer (json: unknown): Parsed<Ok<TxnApproval> | GatewayDeclined> {
  return validateTxn(json) ? txnFrom(json) : { kind: 'unparsable', detail: schemaProblem(validateTxn.errors) }
}

export function parseOtpAnswer (json: unknown): Parsed<Ok<OtpAccepted> | GatewayDeclined> {
  return validateOtp(json) ? otpFrom(json) : { kind: 'unparsable', detail: schemaProblem(validateOtp.errors) }
}

/** Pre-auth capture answers in either shape (spec: the table is the transaction shape, the sample the OTP one). */
export function parseCaptureAnswer (json: unknown): Parsed<Ok<Partial<TxnApproval>> | GatewayDeclined> {
  if (typeof json === 'object' && json !== null && 'pgErrorCode' in json) return parseTxnAnswer(json)
  if (!validateOtp(json)) return { kind: 'unparsable', detail: schemaProblem(validateOtp.errors) }
  const r = otpFrom(json)
  if (r.kind !== 'ok') return r
  return compact({
    kind: 'ok' as const,
    transactionId: asId(json.transactionId) ?? r.pgTransactionId,
    status: json.status,
    approvalCode: asId(json.approvalCode),
    rrn: asId(json.rrn),
    schemeTransactionId: asId(json.schemeTransactionId),
    merchantReferenceNo: asText(json.merchantReferenceNo)
  })
}
