// The prepaid wallet adapter (spec C): Encrypt, Decrypt, the wallet-to-wallet fundTransfer and the Unload.
// A money call has two halves: send (Encrypt, then the call: the platform's answer token) and read
// (Decrypt that token), so a caller can keep the token and read it again without sending twice.
// transfer() and unload() chain both halves. Tokens are opaque here: the platform makes and reads them.
import { createPartyClient } from '../transport/http.js'
import type { CallOptions, Parsed } from '../transport/http.js'
import { callObserver, logOutcome } from '../transport/log-outcome.js'
import { partyCaller } from '../transport/party-call.js'
import { parseBaseUrl, requireText, resolveHttpOptions } from '../transport/options.js'
import type { AdapterDeps, HttpOptions, ResolvedHttpOptions } from '../transport/options.js'
import { parsePlaintext, parseTokenAnswer, parseTransferAnswer, parseUnloadAnswer } from './parse.js'
import type { PrepaidDeclined, TransferDone, UnloadDone } from './parse.js'
import { AdapterOptionError } from '../transport/errors.js'
import { RequestChecks } from '../transport/request-checks.js'
import type { Failed, Ok } from '../transport/result.js'
import { formatUtcTimestamp } from '../transport/time.js'

export type { PrepaidDeclined, TransferDone, UnloadDone, WalletLeg } from './parse.js'
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
/** the spec's messageCode of an Unload */
export const UNLOAD_MESSAGE_CODE = 3450

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
  /** the spec does not give the Unload's path: unload() refuses to run until it is set */
  unloadPath?: string
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

export interface UnloadInput {
  /** unique per request; the platform refuses a repeat with 1054 */
  clientTxnId: string
  customerId: string
  /** the sub-wallet */
  accountNumber: string
  /** integer, minor units; sent as transactionAmount */
  amount: number
  /** integer, minor units, collected on top of the amount */
  fee: number
  /** name of the merchant, account holder or wallet holder */
  receiver: string
  /** 0 wallet, 1 account */
  sourceType: number
  fundFlowType: string
  implId: string
  implType: string
  beneficiaryId: number
  /** starts with the country code */
  customerMobile?: string
  reservedField1?: Record<string, unknown>
  /** default: now, formatted yyyyMMddHHmmss in UTC */
  requestDateTime?: Date
  /** the spec's further optional fields, under the names agreed with the operator */
  extra?: Record<string, unknown>
}

export type TokenResult = Ok<{ token: string }> | PrepaidDeclined | Failed
export type DecryptResult = Ok<{ payload: Record<string, unknown> }> | Failed
/** the platform's answer token, not read yet */
export type SendResult = Ok<{ responseToken: string }> | PrepaidDeclined | Failed
/** a failure after the platform answered carries its answer token, to be read again */
export type ReadFailed = Failed & { responseToken?: string }
export type TransferResult = Ok<TransferDone> | PrepaidDeclined | ReadFailed
export type UnloadResult = Ok<UnloadDone> | PrepaidDeclined | ReadFailed

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
  /** Encrypt and fundTransfer: sent:false on a failure means fundTransfer certainly did not leave */
  sendTransfer (input: TransferInput, call?: CallOptions): Promise<SendResult>
  /** Decrypt a fundTransfer answer token and read it as the answer to clientTxnId (any failure: retryable) */
  readTransfer (responseToken: string, clientTxnId: string, call?: CallOptions): Promise<TransferResult>
  /** Encrypt (messageCode 3450), Unload and Decrypt under one budget, like transfer() */
  unload (input: UnloadInput, call?: CallOptions): Promise<UnloadResult>
  sendUnload (input: UnloadInput, call?: CallOptions): Promise<SendResult>
  readUnload (responseToken: string, clientTxnId: string, call?: CallOptions): Promise<UnloadResult>
  /** whether an unload path is configured */
  readonly unloads: boolean
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

const UNLOAD_FIELDS = new Set([
  'messageCode', 'clientTxnId', 'requestDateTime', 'customerMobile', 'customerId', 'accountNumber', 'transactionAmount',
  'receiver', 'sourceType', 'fundFlowType', 'implId', 'implType', 'beneficiaryId', 'fee', 'reservedField1'
])

/** The spec's table for the Unload's plaintext, checked before anything is sent (or held). */
export function checkUnload (input: UnloadInput): void {
  const checks = new RequestChecks()
    .text('clientTxnId', input.clientTxnId, /^.{1,100}$/, 'must be at most 100 characters')
    .text('customerId', input.customerId, /^.{1,50}$/, 'must be at most 50 characters')
    .text('accountNumber', input.accountNumber, /^.{1,50}$/, 'must be at most 50 characters')
    .amount('amount', input.amount)
    .amount('fee', input.fee, false)
    .text('receiver', input.receiver, /^.{1,100}$/, 'must be at most 100 characters')
    .text('fundFlowType', input.fundFlowType, /^.{1,50}$/, 'must be at most 50 characters')
    .text('implId', input.implId, /^.{1,50}$/, 'must be at most 50 characters')
    .text('implType', input.implType, /^.{1,50}$/, 'must be at most 50 characters')
    .optionalText('customerMobile', input.customerMobile, /^\+?[1-9]\d{7,14}$/, 'must be digits starting with the country code')
  if (input.sourceType !== 0 && input.sourceType !== 1) checks.problems.push('sourceType must be 0 (wallet) or 1 (account)')
  if (typeof input.beneficiaryId !== 'number' || !Number.isSafeInteger(input.beneficiaryId) || input.beneficiaryId < 0) {
    checks.problems.push('beneficiaryId must be an integer')
  }
  if (Number.isSafeInteger(input.amount) && Number.isSafeInteger(input.fee) && !Number.isSafeInteger(input.amount + input.fee)) {
    checks.problems.push('amount + fee is too large')
  }
  // the input may come from a JSON body: null or an array arrive whatever the type says
  const r: unknown = input.reservedField1
  if (r !== undefined && (typeof r !== 'object' || r === null || Array.isArray(r))) checks.problems.push('reservedField1 must be an object')
  for (const name of Object.keys(input.extra ?? {})) {
    if (UNLOAD_FIELDS.has(name)) checks.problems.push(`extra.${name} would overwrite a field of the spec`)
  }
  checks.done()
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
    fundTransfer: requireText(party, 'fundTransferPath', options.fundTransferPath ?? PREPAID_PATHS.fundTransfer, path),
    unload: options.unloadPath === undefined ? undefined : requireText(party, 'unloadPath', options.unloadPath, path)
  }
  const messageCode = requireText(party, 'transferMessageCode', options.transferMessageCode ?? DEFAULT_TRANSFER_MESSAGE_CODE, /^\d{1,6}$/)
  const now = options.now ?? Date.now
  const http = resolveHttpOptions(party, options, PREPAID_HTTP_DEFAULTS)
  const log = deps.logger.child({ adapter: party })
  const observe = callObserver(party, deps)
  const client = createPartyClient(party, base, http, log)
  const post = partyCaller(client, log, observe)

  const keyOnly = { 'x-api-key': apiKey }

  /** one budget for the calls of a chain: each gets what the previous ones left */
  function budget (call: CallOptions, started: number): () => CallOptions {
    const budgetMs = Math.min(http.totalTimeoutMs, call.budgetMs ?? Number.POSITIVE_INFINITY)
    return () => ({ ...call, budgetMs: budgetMs - (performance.now() - started) })
  }

  /** Encrypt, then post the token to a money call's path. */
  async function send (op: string, p: string, plain: Record<string, unknown>, call: CallOptions): Promise<SendResult> {
    const left = budget(call, performance.now())
    const sealed = await adapter.encrypt(plain, left())
    if (sealed.kind === 'failed') return { ...sealed, sent: false, detail: `encrypt: ${sealed.detail}` }
    if (sealed.kind === 'declined') return sealed
    const answer = await post({ op, path: p, headers: transferHeaders, body: { token: sealed.token }, parse: parseTokenAnswer, refs: { clientTxnId: String(plain.clientTxnId) } }, left())
    if (answer.kind === 'failed') return { ...answer, detail: `${op}: ${answer.detail}` }
    if (answer.kind === 'declined') return answer
    return { kind: 'ok', responseToken: answer.token }
  }

  /**
   * Decrypt an answer token and parse it. The platform had answered, so whatever goes wrong here leaves
   * the outcome unknown, not absent: a retryable failure that keeps the token. A Decrypt that refuses the
   * token answers plaintext without our clientTxnId: that is not the money call's answer.
   */
  async function read<D> (
    what: string, token: string, clientTxnId: string, call: CallOptions,
    parse: (json: unknown, clientTxnId: string) => Parsed<Ok<D> | PrepaidDeclined>
  ): Promise<Ok<D> | PrepaidDeclined | ReadFailed> {
    const unknown = (f: Omit<Failed, 'kind' | 'sent' | 'retryable' | 'responseToken'>): ReadFailed =>
      ({ kind: 'failed', ...f, sent: true, retryable: true, responseToken: token })
    const opened = await adapter.decrypt(token, call)
    if (opened.kind === 'failed') return unknown({ reason: opened.reason, attempts: opened.attempts, detail: `decrypt: ${opened.detail}` })
    const parsed = parse(opened.payload, clientTxnId)
    if (parsed.kind === 'unparsable') return unknown({ reason: 'malformed', attempts: 1, detail: `${what} answer: ${parsed.detail}` })
    if (parsed.kind === 'declined' && parsed.clientTxnId !== clientTxnId) {
      return unknown({ reason: 'malformed', attempts: 1, detail: `${what} answer: code ${parsed.code} without our clientTxnId` })
    }
    return parsed
  }

  function transferPlain (input: TransferInput): Record<string, unknown> {
    return {
      ...input.extra,
      messageCode,
      clientTxnId: input.clientTxnId,
      requestDateTime: formatUtcTimestamp(input.requestDateTime ?? new Date(now())),
      senders: [walletWire(input.from, input.amount)],
      receivers: [walletWire(input.to, input.amount)]
    }
  }

  function checkTransfer (input: TransferInput): void {
    const checks = new RequestChecks().text('clientTxnId', input.clientTxnId, /^.{1,100}$/, 'must be at most 100 characters').amount('amount', input.amount)
    checkWallet(checks, 'from', input.from)
    checkWallet(checks, 'to', input.to)
    checks.done()
  }

  function unloadPlain (input: UnloadInput): Record<string, unknown> {
    const plain: Record<string, unknown> = {
      ...input.extra,
      messageCode: UNLOAD_MESSAGE_CODE,
      clientTxnId: input.clientTxnId,
      requestDateTime: formatUtcTimestamp(input.requestDateTime ?? new Date(now())),
      customerId: input.customerId,
      accountNumber: input.accountNumber,
      transactionAmount: input.amount,
      receiver: input.receiver,
      sourceType: input.sourceType,
      fundFlowType: input.fundFlowType,
      implId: input.implId,
      implType: input.implType,
      beneficiaryId: input.beneficiaryId,
      fee: input.fee
    }
    if (input.customerMobile !== undefined) plain.customerMobile = input.customerMobile
    if (input.reservedField1 !== undefined) plain.reservedField1 = input.reservedField1
    return plain
  }

  function unloadPath (): string {
    if (paths.unload === undefined) throw new AdapterOptionError('prepaid.unloadPath: required for unloads (PREPAID_UNLOAD_PATH)')
    return paths.unload
  }

  const adapter: PrepaidAdapter = {
    async encrypt (plain, call) {
      const refs = { clientTxnId: typeof plain.clientTxnId === 'string' ? plain.clientTxnId : undefined }
      return post({ op: 'encrypt', path: paths.encrypt, headers: keyOnly, body: plain, parse: parseTokenAnswer, refs }, call)
    },

    async decrypt (token, call) {
      new RequestChecks().text('token', token).done()
      return post({ op: 'decrypt', path: paths.decrypt, headers: keyOnly, body: { token }, parse: parsePlaintext, refs: {} }, call)
    },

    async fundTransfer (token, call) {
      new RequestChecks().text('token', token).done()
      return post({ op: 'fundTransfer', path: paths.fundTransfer, headers: transferHeaders, body: { token }, parse: parseTokenAnswer, refs: {} }, call)
    },

    async transfer (input, call = {}) {
      checkTransfer(input)
      const started = performance.now()
      const left = budget(call, started)
      const sent = await send('fundTransfer', paths.fundTransfer, transferPlain(input), left())
      const out = sent.kind === 'ok' ? await read('transfer', sent.responseToken, input.clientTxnId, left(), parseTransferAnswer) : sent
      logOutcome(log, 'transfer', { clientTxnId: input.clientTxnId }, out, started, observe)
      return out
    },

    async sendTransfer (input, call = {}) {
      checkTransfer(input)
      return await send('fundTransfer', paths.fundTransfer, transferPlain(input), call)
    },

    async readTransfer (responseToken, clientTxnId, call = {}) {
      new RequestChecks().text('responseToken', responseToken).text('clientTxnId', clientTxnId).done()
      return await read('transfer', responseToken, clientTxnId, call, parseTransferAnswer)
    },

    async unload (input, call = {}) {
      checkUnload(input)
      const p = unloadPath()
      const started = performance.now()
      const left = budget(call, started)
      const sent = await send('unload', p, unloadPlain(input), left())
      const out = sent.kind === 'ok' ? await read('unload', sent.responseToken, input.clientTxnId, left(), parseUnloadAnswer) : sent
      logOutcome(log, 'unload', { clientTxnId: input.clientTxnId }, out, started)
      return out
    },

    async sendUnload (input, call = {}) {
      checkUnload(input)
      return await send('unload', unloadPath(), unloadPlain(input), call)
    },

    async readUnload (responseToken, clientTxnId, call = {}) {
      new RequestChecks().text('responseToken', responseToken).text('clientTxnId', clientTxnId).done()
      return await read('unload', responseToken, clientTxnId, call, parseUnloadAnswer)
    },

    unloads: paths.unload !== undefined,

    close: () => client.close()
  }
  return adapter
}
