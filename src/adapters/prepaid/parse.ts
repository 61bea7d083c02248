// Schemas and parsers for the prepaid platform's answers: a {token} (Encrypt, fundTransfer), a plaintext
// error ({responseCode, responseMessage}) when a call is refused before any token is made, and the
// decrypted wallet-to-wallet transfer response.
import type { Parsed } from '../transport/http.js'
import type { DeclinedBase, Ok } from '../transport/result.js'
import { amountLike, asAmount, asId, asText, codeLike, compact, compile, idLike, optionalText, schemaProblem } from '../transport/schema.js'
import { normaliseWalletCode, walletCodeDescription, walletCodeFamily } from './wallet-codes.js'
import type { WalletDeclineFamily } from './wallet-codes.js'

export type PrepaidDeclined = DeclinedBase<WalletDeclineFamily> & {
  clientTxnId?: string
  responseDateTime?: string
}

export interface WalletLeg {
  urn?: string
  customerId?: string
  ledgerRefNo?: string
  /** minor units */
  availableBalance?: number
  /** minor units */
  transactionAmount?: number
}

export interface TransferDone {
  clientTxnId: string
  ledgerTransactionId: string
  /** minor units */
  transactionAmount: number
  /** the sender's balance after the transfer, minor units, when the platform sends it */
  availableBalance?: number
  urn?: string
  customerId?: string
  responseDateTime?: string
  senders: WalletLeg[]
  receivers: WalletLeg[]
}

interface CodeWire {
  responseCode?: string | number
  responseMessage?: string | null
  responseDateTime?: string | number | null
  clientTxnId?: string | number
}

interface TokenWire extends CodeWire {
  token?: string
}

interface LegWire {
  urn?: string | number
  customerId?: string | number
  ledgerRefNo?: string | number
  availableBalance?: string | number | null
  transactionAmount?: string | number | null
}

interface TransferWire extends CodeWire {
  responseCode: string | number
  ledgerTransactionId?: string | number
  transactionAmount?: string | number
  availableBalance?: string | number | null
  urn?: string | number
  customerId?: string | number
  senders?: LegWire[]
  receivers?: LegWire[]
}

const codeFields = {
  responseCode: codeLike,
  responseMessage: optionalText,
  responseDateTime: { type: ['string', 'integer', 'null'] },
  clientTxnId: idLike
}

const validateToken = compile<TokenWire>({
  type: 'object',
  properties: { token: { type: 'string', minLength: 1, maxLength: 65536 }, ...codeFields }
})

const nullableAmount = { anyOf: [amountLike, { type: 'null' }] }
const leg = {
  type: 'object',
  properties: { urn: idLike, customerId: idLike, ledgerRefNo: idLike, availableBalance: nullableAmount, transactionAmount: nullableAmount }
}

const validateTransfer = compile<TransferWire>({
  type: 'object',
  required: ['responseCode'],
  properties: {
    ...codeFields,
    ledgerTransactionId: idLike,
    transactionAmount: amountLike,
    availableBalance: nullableAmount,
    urn: idLike,
    customerId: idLike,
    messageCode: codeLike,
    senders: { type: 'array', items: leg },
    receivers: { type: 'array', items: leg }
  }
})

function declinedFrom (w: CodeWire & { responseCode: string | number }): PrepaidDeclined {
  const code = normaliseWalletCode(w.responseCode)
  const family = walletCodeFamily(code)
  return compact({
    kind: 'declined' as const,
    code,
    description: asText(w.responseMessage) ?? walletCodeDescription(code),
    family,
    retryable: family === 'system',
    clientTxnId: asId(w.clientTxnId),
    responseDateTime: asId(w.responseDateTime)
  })
}

/** Encrypt and fundTransfer: a token, or a plaintext refusal. */
export function parseTokenAnswer (json: unknown): Parsed<Ok<{ token: string }> | PrepaidDeclined> {
  if (!validateToken(json)) return { kind: 'unparsable', detail: schemaProblem(validateToken.errors) }
  if (json.token !== undefined) return { kind: 'ok', token: json.token }
  if (json.responseCode !== undefined && normaliseWalletCode(json.responseCode) !== '00') {
    return declinedFrom({ ...json, responseCode: json.responseCode })
  }
  return { kind: 'unparsable', detail: '/token required' }
}

/** Decrypt: the plaintext JSON of the original answer, whatever it says. */
export function parsePlaintext (json: unknown): Parsed<Ok<{ payload: Record<string, unknown> }>> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { kind: 'unparsable', detail: '/ type' }
  return { kind: 'ok', payload: json as Record<string, unknown> }
}

function legFrom (w: LegWire): WalletLeg {
  return compact({
    urn: asId(w.urn),
    customerId: asId(w.customerId),
    ledgerRefNo: asId(w.ledgerRefNo),
    availableBalance: asAmount(w.availableBalance),
    transactionAmount: asAmount(w.transactionAmount)
  })
}

/** The decrypted transfer answer; it must be the answer to our clientTxnId. */
export function parseTransferAnswer (json: unknown, clientTxnId: string): Parsed<Ok<TransferDone> | PrepaidDeclined> {
  if (!validateTransfer(json)) return { kind: 'unparsable', detail: schemaProblem(validateTransfer.errors) }
  const echoed = asId(json.clientTxnId)
  if (echoed !== undefined && echoed !== clientTxnId) return { kind: 'unparsable', detail: '/clientTxnId not ours' }
  if (normaliseWalletCode(json.responseCode) !== '00') return declinedFrom(json)
  const ledgerTransactionId = asId(json.ledgerTransactionId)
  const transactionAmount = asAmount(json.transactionAmount)
  if (echoed === undefined) return { kind: 'unparsable', detail: '/clientTxnId required on success' }
  if (ledgerTransactionId === undefined) return { kind: 'unparsable', detail: '/ledgerTransactionId required on success' }
  if (transactionAmount === undefined) return { kind: 'unparsable', detail: '/transactionAmount required on success' }
  return compact({
    kind: 'ok' as const,
    clientTxnId: echoed,
    ledgerTransactionId,
    transactionAmount,
    availableBalance: asAmount(json.availableBalance),
    urn: asId(json.urn),
    customerId: asId(json.customerId),
    responseDateTime: asId(json.responseDateTime),
    senders: (json.senders ?? []).map(legFrom),
    receivers: (json.receivers ?? []).map(legFrom)
  })
}

export interface UnloadDone {
  clientTxnId: string
  /** the platform's id of the unload, when it sends one */
  ledgerTransactionId?: string
  /** minor units, when the platform echoes it */
  transactionAmount?: number
  /** the wallet's balance after the unload, minor units, when the platform sends it */
  availableBalance?: number
  responseDateTime?: string
}

interface UnloadWire extends CodeWire {
  responseCode: string | number
  ledgerTransactionId?: string | number
  transactionAmount?: string | number
  availableBalance?: string | number | null
}

// The spec shows no Unload answer: these are the fields Decrypt's own example lists for every answer.
const validateUnload = compile<UnloadWire>({
  type: 'object',
  required: ['responseCode'],
  properties: {
    ...codeFields,
    ledgerTransactionId: idLike,
    ledgerRefNo: idLike,
    transactionAmount: amountLike,
    availableBalance: nullableAmount,
    messageCode: codeLike,
    customerId: idLike
  }
})

/** The decrypted Unload answer; it must name our clientTxnId. */
export function parseUnloadAnswer (json: unknown, clientTxnId: string): Parsed<Ok<UnloadDone> | PrepaidDeclined> {
  if (!validateUnload(json)) return { kind: 'unparsable', detail: schemaProblem(validateUnload.errors) }
  const echoed = asId(json.clientTxnId)
  if (echoed !== undefined && echoed !== clientTxnId) return { kind: 'unparsable', detail: '/clientTxnId not ours' }
  if (normaliseWalletCode(json.responseCode) !== '00') return declinedFrom(json)
  if (echoed === undefined) return { kind: 'unparsable', detail: '/clientTxnId required on success' }
  return compact({
    kind: 'ok' as const,
    clientTxnId: echoed,
    ledgerTransactionId: asId(json.ledgerTransactionId),
    transactionAmount: asAmount(json.transactionAmount),
    availableBalance: asAmount(json.availableBalance),
    responseDateTime: asId(json.responseDateTime)
  })
}
