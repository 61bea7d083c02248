// The prepaid wallet adapter (spec C): Encrypt, Decrypt and the wallet-to-wallet fundTransfer, plus
// transfer(), which chains the three. Tokens are opaque here: the platform makes and reads them.
import { createPartyClient, interpret } from './http.js'
import type { CallOptions, Parsed } from './http.js'
import { callObserver, logOutcome } from './log-outcome.js'
import { parseBaseUrl, requireText, resolveHttpOptions } from './options.js'
import type { AdapterDeps, HttpOptions, ResolvedHttpOptions } from './options.js'
import { parsePlaintext, parseTokenAnswer, parseTransferAnswer } from './prepaid-parse.js'
import type { PrepaidDeclined, TransferDone } from './prepaid-parse.js'
import { RequestChecks } from './request-checks.js'
import type { Answer, Failed, Ok } from './result.js'
import { formatUtcTimestamp } from './time.js'

export type { PrepaidDeclined, TransferDone, WalletLeg } from './prepaid-parse.js'
export type { WalletDeclineFamily } from './wallet-codes.js'

export const PREPAID_PATHS = Object.freeze({
  encrypt: '/api/v2/encrypt',
  decrypt: '/api/v2/decrypt',
  /** the sandbox path the spec gives; production paths come from the operator */
  fundTransfer: '/uat/sbx/api/onboarding/v2/fundTransfer'
})

/**
 * The spec shows neither the plaintext fields of a transfer request nor its messageCode (Unload is 3450).
 * This default and the senders/receivers shape built by transfer() are our assumptions: confirm them
 * with the operator and override transferMessageCode if needed.
 */
export const DEFAULT_TRANSFER_MESSAGE_CODE = '3460'

export interface PrepaidOptions extends HttpOptions {
  baseUrl: string
  /** x-api-key on every call */
  apiKey: string
  /** X-Consumer-Custom-ID on fundTransfer */
  consumerKey: string
  secureCode: string
  clientId: string
  bankId: string
  entityId?: string
  encryptPath?: string
  decryptPath?: string
  fundTransferPath?: string
  transferMessageCode?: string
  /** clock for the default requestDateTime */
  now?: () => number
}

export const PREPAID_HTTP_DEFAULTS: ResolvedHttpOptions = Object.freeze({
  connectTimeoutMs: 1000,
  headersTimeoutMs: 5000,
  bodyTimeoutMs: 5000,
  totalTimeoutMs: 10_000,
  connections: 8,
  keepAliveTimeoutMs: 4000,
  responseBytesMax: 256 * 1024,
  connectRetriesMax: 1
})

/** A wallet named by exactly one customer identifier and the sub-wallet's account number. */
export interface WalletRef {
  urn?: string
  customerId?: string
  accountNumber: string
}

export interface TransferInput {
  /** unique per request; the platform refuses a repeat with 1054, so a retry after a failure cannot double-move */
  clientTxnId: string
  /** integer, minor units */
  amount: number
  from: WalletRef
  to: WalletRef
  /** default: now, formatted yyyyMMddHHmmss in UTC */
  requestDateTime?: Date
  /** further plaintext fields agreed with the operator (reservedField1, currency, ...) */
  extra?: Record<string, unknown>
}

export type TokenResult = Ok<{ token: string }> | PrepaidDeclined | Failed
export type DecryptResult = Ok<{ payload: Record<string, unknown> }> | Failed
export type TransferResult = Ok<TransferDone> | PrepaidDeclined | Failed

export interface PrepaidAdapter {
  /** plaintext request → token */
  encrypt (plain: Record<string, unknown>, call?: CallOptions): Promise<TokenResult>
  /** token → the plaintext JSON of the original answer */
  decrypt (token: string, call?: CallOptions): Promise<DecryptResult>
  /** encrypted request → encrypted answer (decrypt it to read the outcome) */
  fundTransfer (token: string, call?: CallOptions): Promise<TokenResult>
  /**
   * Encrypt, fundTransfer and Decrypt under one budget. A failure before fundTransfer is sent has
   * sent:false; after it, sent:true (money may have moved: repeat with the same clientTxnId).
   */
  transfer (input: TransferInput, call?: CallOptions): Promise<TransferResult>
  close (): Promise<void>
}

function checkWallet (checks: RequestChecks, side: string, w: WalletRef | undefined): void {
  if (w === undefined) {
    checks.problems.push(`${side} is required`)
    return
  }
  checks.text(`${side}.accountNumber`, w.accountNumber).optionalText(`${side}.urn`, w.urn).optionalText(`${side}.customerId`, w.customerId)
  if ((w.urn === undefined) === (w.customerId === undefined)) checks.problems.push(`${side} needs exactly one of urn and customerId`)
}

function walletWire (w: WalletRef, amount: number): Record<string, unknown> {
  const out: Record<string, unknown> = { accountNumber: w.accountNumber, transactionAmount: amount }
  if (w.urn !== undefined) out.urn = w.urn
  if (w.customerId !== undefined) out.customerId = w.customerId
  return out
}

export function createPrepaidAdapter (options: PrepaidOptions, deps: AdapterDeps): PrepaidAdapter {
  const party = 'prepaid'
  const base = parseBaseUrl(party, requireText(party, 'baseUrl', options.baseUrl))
  const apiKey = requireText(party, 'apiKey', options.apiKey)
  const path = /^\/[\w./-]*$/
  const transferHeaders: Record<string, string> = {
    'X-Consumer-Custom-ID': requireText(party, 'consumerKey', options.consumerKey),
    bankId: requireText(party, 'bankId', options.bankId, /^\d{1,10}$/),
    clientId: requireText(party, 'clientId', options.clientId),
    secureCode: requireText(party, 'secureCode', options.secureCode),
    'x-api-key': apiKey
  }
  if (options.entityId !== undefined) transferHeaders.entityId = requireText(party, 'entityId', options.entityId, /^\d{1,10}$/)
  const paths = {
    encrypt: requireText(party, 'encryptPath', options.encryptPath ?? PREPAID_PATHS.encrypt, path),
    decrypt: requireText(party, 'decryptPath', options.decryptPath ?? PREPAID_PATHS.decrypt, path),
    fundTransfer: requireText(party, 'fundTransferPath', options.fundTransferPath ?? PREPAID_PATHS.fundTransfer, path)
  }
  const messageCode = requireText(party, 'transferMessageCode', options.transferMessageCode ?? DEFAULT_TRANSFER_MESSAGE_CODE, /^\d{1,6}$/)
  const now = options.now ?? Date.now
  const http = resolveHttpOptions(party, options, PREPAID_HTTP_DEFAULTS)
  const log = deps.logger.child({ adapter: party })
  const observe = callObserver(party, deps)
  const client = createPartyClient(party, base, http, log)

  async function post<R extends Answer> (
    op: string, p: string, headers: Record<string, string>, body: unknown,
    parse: (json: unknown) => Parsed<R>, refs: Record<string, string | undefined>, call?: CallOptions
  ): Promise<R | Failed> {
    const started = performance.now()
    const res = await client.postJson(op, p, headers, body, call)
    const out = res.kind === 'failed' ? res : interpret(res, parse)
    logOutcome(log, op, refs, out, started, observe)
    return out
  }

  const keyOnly = { 'x-api-key': apiKey }

  async function chain (input: TransferInput, call: CallOptions, started: number): Promise<TransferResult> {
    // one budget for the three calls: each gets what the previous ones left
    const budgetMs = Math.min(http.totalTimeoutMs, call.budgetMs ?? Number.POSITIVE_INFINITY)
    const left = (): CallOptions => ({ ...call, budgetMs: budgetMs - (performance.now() - started) })
    const plain = {
      ...input.extra,
      messageCode,
      clientTxnId: input.clientTxnId,
      requestDateTime: formatUtcTimestamp(input.requestDateTime ?? new Date(now())),
      senders: [walletWire(input.from, input.amount)],
      receivers: [walletWire(input.to, input.amount)]
    }

    const sealed = await adapter.encrypt(plain, left())
    if (sealed.kind === 'failed') return { ...sealed, sent: false, detail: `encrypt: ${sealed.detail}` }
    if (sealed.kind === 'declined') return sealed

    const answer = await adapter.fundTransfer(sealed.token, left())
    if (answer.kind === 'failed') return { ...answer, detail: `fundTransfer: ${answer.detail}` }
    if (answer.kind === 'declined') return answer

    const opened = await adapter.decrypt(answer.token, left())
    // the transfer was answered, only its reading failed: the outcome is unknown, not absent
    if (opened.kind === 'failed') return { ...opened, sent: true, retryable: true, detail: `decrypt: ${opened.detail}` }
    const parsed = parseTransferAnswer(opened.payload, input.clientTxnId)
    if (parsed.kind !== 'unparsable') return parsed
    return { kind: 'failed', reason: 'malformed', retryable: true, sent: true, attempts: 1, detail: `transfer answer: ${parsed.detail}` }
  }

  const adapter: PrepaidAdapter = {
    async encrypt (plain, call) {
      const refs = { clientTxnId: typeof plain.clientTxnId === 'string' ? plain.clientTxnId : undefined }
      return post('encrypt', paths.encrypt, keyOnly, plain, parseTokenAnswer, refs, call)
    },

    async decrypt (token, call) {
      new RequestChecks().text('token', token).done()
      return post('decrypt', paths.decrypt, keyOnly, { token }, parsePlaintext, {}, call)
    },

    async fundTransfer (token, call) {
      new RequestChecks().text('token', token).done()
      return post('fundTransfer', paths.fundTransfer, transferHeaders, { token }, parseTokenAnswer, {}, call)
    },

    async transfer (input, call = {}) {
      const checks = new RequestChecks().text('clientTxnId', input.clientTxnId, /^.{1,100}$/, 'must be at most 100 characters').amount('amount', input.amount)
      checkWallet(checks, 'from', input.from)
      checkWallet(checks, 'to', input.to)
      checks.done()
      const started = performance.now()
      const out = await chain(input, call, started)
      logOutcome(log, 'transfer', { clientTxnId: input.clientTxnId }, out, started, observe)
      return out
    },

    close: () => client.close()
  }
  return adapter
}
