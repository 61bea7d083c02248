// The one answer shape of POST /api/v1/externalAuth, for every outcome including errors (README "The decision").
import { RESPONSE_CODES, type ResponseCode } from '../domain/request.js'
import { formatDateTime14 } from '../time.js'

export interface Answer {
  responseCode: ResponseCode
  responseDescription: string
  responseDateTime: string
  transactionAmount: string
  currencyCode: string
}

export interface AnswerContext {
  timezone: string
  defaultCurrency: string
  clock: () => number
}

/** Echoes what it can of a body that may be anything (it may have failed validation). */
export function answerFor (code: ResponseCode, body: unknown, ctx: AnswerContext): Answer {
  const b = (body !== null && typeof body === 'object' && !Array.isArray(body)) ? body as Record<string, unknown> : {}
  const amount = typeof b.transactionAmount === 'string' && /^[0-9]{1,15}$/.test(b.transactionAmount) ? b.transactionAmount : ''
  const currency = typeof b.currencyCode === 'string' && /^[0-9]{3}$/.test(b.currencyCode) ? b.currencyCode : ctx.defaultCurrency
  return {
    responseCode: code,
    responseDescription: RESPONSE_CODES[code],
    responseDateTime: formatDateTime14(ctx.clock(), ctx.timezone),
    transactionAmount: amount,
    currencyCode: currency
  }
}
