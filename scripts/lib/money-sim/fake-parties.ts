// In-process stand-ins for the payment gateway and the prepaid platform, at the adapters' interfaces. Each
// keeps its own ledger (the card charged, the money moved), which outlives our process, so the simulation can
// check every lifecycle record against what the party actually did. Their calls wait in the scheduler like
// the store's, and can time out, answer an HTTP error status (500 or 404) or garbage, be lost after the party
// acted, or never be sent. The adapters' own reading of an error status or of garbage (`interpret` and the
// parsers) decides what the service sees.
import type { GatewayAdapter, AuthorizeResult, OtpResult, PreAuthResult } from '../../../src/adapters/gateway/adapter.js'
import type { PrepaidAdapter, PrepaidDeclined, SendResult, TransferResult, UnloadResult } from '../../../src/adapters/prepaid/adapter.js'
import { gatewayCodeMeaning } from '../../../src/adapters/gateway/codes.js'
import type { GatewayDeclined } from '../../../src/adapters/gateway/parse.js'
import { parseOtpAnswer, parseTxnAnswer } from '../../../src/adapters/gateway/parse.js'
import { parseTokenAnswer } from '../../../src/adapters/prepaid/parse.js'
import { interpret, type Parsed } from '../../../src/adapters/transport/http.js'
import { failed, type Answer, type Failed } from '../../../src/adapters/transport/result.js'
import { walletCodeDescription, walletCodeFamily } from '../../../src/adapters/prepaid/wallet-codes.js'
import type { ProcessHandle, SimContext } from './context.js'
import type { QueuedCall } from './scheduler.js'
import { PARTY_FAULT_MODES, type FaultKind, type PartyFaultMode } from './options.js'

export const SIM_OTP = '246810'

export interface GatewayLoad {
  pgTransactionId: string
  amount: number
  verified: boolean
  /** the card was charged (authorize approved) */
  charged: boolean
  /** the authorize was declined */
  declined: boolean
}

export interface PlatformTransfer {
  fromUrn: string
  toUrn: string
  amount: number
  /** moved: the platform took it; declined: it refused it */
  outcome: 'moved' | 'declined'
}

export interface PlatformUnload {
  urn: string
  /** amount and fee: what leaves the wallet */
  total: number
  outcome: 'moved' | 'declined'
}

/** What the platform answered a money call with, sealed in the answer token until Decrypt opens it. */
type Sealed = { kind: 'ok', ledgerTransactionId: string, amount: number, legs: { from: string, to: string } | null } | PrepaidDeclined

/** The parties' own books: what they did, whatever we heard of it. */
export class PartyBooks {
  readonly loads = new Map<string, GatewayLoad>()
  readonly transfers = new Map<string, PlatformTransfer>()
  readonly unloads = new Map<string, PlatformUnload>()
  /** one clientTxnId space for every money call, as the platform refuses any repeat with 1054 */
  readonly clientTxnIds = new Map<string, 'transfer' | 'unload'>()
  /** answer tokens and what they say */
  readonly tokens = new Map<string, Sealed>()
  private seq = 0
  nextId (): string { return String(++this.seq).padStart(10, '0') }
}

const faultsOf = (party: 'gateway' | 'prepaid'): FaultKind[] => PARTY_FAULT_MODES.map((m) => `${party}-${m}` as FaultKind)
const GATEWAY_FAULTS = faultsOf('gateway')
const PREPAID_FAULTS = faultsOf('prepaid')
/** Decrypt's faults: its answer lost after fundTransfer (or Unload) answered, or unreadable */
const DECRYPT_FAULTS: FaultKind[] = ['prepaid-decrypt-lost', 'prepaid-decrypt-garbage']

function gatewayDeclined (code: string, description: string, status: string): GatewayDeclined {
  const m = gatewayCodeMeaning(code, description)
  return { kind: 'declined', code, description, status, family: m.family, retryable: m.retryable, ...(m.previously !== undefined ? { previously: m.previously } : {}) }
}

/**
 * One party call through the scheduler. `act` is the party doing its work and answering; `parse` is how the
 * adapter reads a body, used for the 500 and garbage faults.
 */
function partyCall<R> (sim: SimContext, proc: ProcessHandle, label: string, ref: string, act: () => R, parse: (json: unknown) => Parsed<Answer>,
  faults: readonly FaultKind[] = label.startsWith('gateway') ? GATEWAY_FAULTS : PREPAID_FAULTS): Promise<R | Failed> {
  if (!proc.alive) return new Promise(() => {})
  return new Promise((resolve) => {
    const call = (faultsOn: boolean): QueuedCall => ({
      owner: proc.id,
      label,
      run: async () => {
        sim.counts.partyCalls++
        const fault = faultsOn ? sim.fault(faults) : null
        const mode = fault === null ? null : fault.slice(fault.indexOf('-') + 1) as PartyFaultMode | 'decrypt-lost' | 'decrypt-garbage'
        sim.trace?.push(`${label} ${ref}${mode !== null ? ` fault ${mode}` : ''}`)
        switch (mode) {
          case 'stall':
            // the answer takes longer than the reference's lock lives; another call of it comes meanwhile
            sim.stalled(ref)
            sim.scheduler.add(call(false))
            return
          case 'not-sent':
            resolve(failed('transport', { retryable: true, sent: false, attempts: 1, detail: 'ECONNREFUSED' }))
            return
          case '500':
            // an HTTP error status before the party acted: a 5xx, or a 4xx as a wrong path or refused
            // credentials get (with the JSON error body a web framework writes); either is read by `interpret`
            if (sim.rnd() < 0.5) resolve(interpret({ kind: 'response', status: 500, json: undefined, attempts: 1 }, parse) as Failed)
            else resolve(interpret({ kind: 'response', status: 404, json: { statusCode: 404, error: 'Not Found', message: 'Route not found' }, attempts: 1 }, parse) as R | Failed)
            return
          case 'timeout':
            // the request may or may not have been processed before the time ran out
            if (sim.rnd() < 0.5) act()
            resolve(failed('timeout', { retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' }))
            return
          case 'lost':
            act()
            resolve(failed('transport', { retryable: true, sent: true, attempts: 1, detail: 'ECONNRESET' }))
            return
          case 'decrypt-lost':
            resolve(failed('transport', { retryable: true, sent: true, attempts: 1, detail: 'ECONNRESET' }))
            return
          case 'decrypt-garbage':
          case 'garbage':
            act()
            resolve(interpret({ kind: 'response', status: 200, json: { unexpected: 'shape' }, attempts: 1 }, parse) as R | Failed)
            return
          default:
            resolve(act())
        }
      },
      orphan: async () => {
        const reached = sim.rnd() < 0.5
        sim.trace?.push(`${label} ${ref} from a dead process: ${reached ? 'reached the party' : 'never sent'}`)
        if (reached) act()
      }
    })
    sim.scheduler.add(call(true))
  })
}

export function fakeGateway (sim: SimContext, proc: ProcessHandle, books: PartyBooks, approveRate = 0.85): GatewayAdapter {
  const otpOk = (l: GatewayLoad): OtpResult => ({ kind: 'ok', pgTransactionId: l.pgTransactionId, validityPeriodMin: 5 })
  const unsupported = async (): Promise<PreAuthResult> => gatewayDeclined('02', 'Invalid Command', 'failed')
  return {
    async generateOtp (input) {
      return await partyCall(sim, proc, 'gateway.generateOtp', input.merchantReferenceNo, () => {
        let l = books.loads.get(input.merchantReferenceNo)
        if (l === undefined) {
          l = { pgTransactionId: `PG${books.nextId()}`, amount: input.amount, verified: false, charged: false, declined: false }
          books.loads.set(input.merchantReferenceNo, l)
        }
        return otpOk(l)
      }, parseOtpAnswer) as OtpResult
    },
    async resendOtp (input) {
      return await partyCall(sim, proc, 'gateway.resendOtp', input.merchantReferenceNo, () => {
        const l = books.loads.get(input.merchantReferenceNo)
        return l === undefined ? gatewayDeclined('07', 'Invalid Parameter', 'failed') : otpOk(l)
      }, parseOtpAnswer) as OtpResult
    },
    async verifyOtp (input) {
      return await partyCall(sim, proc, 'gateway.verifyOtp', input.merchantReferenceNo, () => {
        const l = books.loads.get(input.merchantReferenceNo)
        if (l === undefined || l.pgTransactionId !== input.pgTransactionId) return gatewayDeclined('07', 'Invalid Parameter', 'failed')
        if (input.otp !== SIM_OTP) return gatewayDeclined('450', 'Invalid OTP', 'failed')
        l.verified = true
        return { kind: 'ok' as const, pgTransactionId: l.pgTransactionId, authResponseCode: '00' }
      }, parseOtpAnswer) as OtpResult
    },
    async authorize (input) {
      return await partyCall(sim, proc, 'gateway.authorize', input.merchantReferenceNo, (): AuthorizeResult => {
        const l = books.loads.get(input.merchantReferenceNo)
        if (l === undefined || !l.verified) return gatewayDeclined('07', 'Invalid Parameter', 'failed')
        if (l.charged || l.declined) return gatewayDeclined('96', l.charged ? 'PREVIOUSLY AUTHORIZED' : 'PREVIOUSLY DECLINED', 'failed')
        // the issuer's answer is the party's own; drawn from the seed when first asked
        if (sim.rnd() < approveRate) {
          l.charged = true
          return { kind: 'ok', transactionId: l.pgTransactionId, status: '50020' }
        }
        l.declined = true
        return gatewayDeclined('51', 'DECLINED (insufficient funds)', 'failed')
      }, parseTxnAnswer) as AuthorizeResult
    },
    preAuthCompletion: unsupported,
    preAuthCancellation: unsupported,
    async close () {}
  }
}

export function fakePrepaid (sim: SimContext, proc: ProcessHandle, books: PartyBooks, approveRate = 0.9): PrepaidAdapter {
  const notUsed = async (): Promise<never> => { throw new Error('the simulation drives the services\' send and read only') }
  const declined = (code: string, clientTxnId: string): PrepaidDeclined =>
    ({ kind: 'declined', code, description: walletCodeDescription(code), family: walletCodeFamily(code), retryable: false, clientTxnId })
  /** fundTransfer or Unload: the platform acts on the first call of a clientTxnId and answers a token */
  const send = async (label: string, kind: 'transfer' | 'unload', clientTxnId: string, act: (moved: boolean) => { amount: number, legs: { from: string, to: string } | null }): Promise<SendResult> => {
    return await partyCall(sim, proc, label, clientTxnId, (): SendResult => {
      let sealed: Sealed
      if (books.clientTxnIds.has(clientTxnId)) sealed = declined('1054', clientTxnId)
      else {
        books.clientTxnIds.set(clientTxnId, kind)
        const moved = sim.rnd() < approveRate
        const what = act(moved)
        sealed = moved ? { kind: 'ok', ledgerTransactionId: `L${books.nextId()}`, ...what } : declined('6919', clientTxnId)
      }
      const token = `T${books.nextId()}`
      books.tokens.set(token, sealed)
      return { kind: 'ok', responseToken: token }
    }, parseTokenAnswer) as SendResult
  }
  /** Decrypt of an answer token, read as the adapter reads it */
  const read = async <R>(label: string, token: string, clientTxnId: string, ok: (s: Extract<Sealed, { kind: 'ok' }>) => R): Promise<R | PrepaidDeclined | Failed> => {
    const out = await partyCall(sim, proc, label, clientTxnId, (): R | PrepaidDeclined | Failed => {
      const sealed = books.tokens.get(token)
      if (sealed === undefined) return failed('malformed', { retryable: true, sent: true, attempts: 1, detail: 'unknown token' })
      return sealed.kind === 'ok' ? ok(sealed) : sealed
    }, parseTokenAnswer, DECRYPT_FAULTS)
    // whatever goes wrong once the platform answered leaves the outcome unknown: retryable, the token kept
    const o = out as { kind: string }
    if (o.kind === 'failed') return { ...o, sent: true, retryable: true, responseToken: token } as unknown as Failed
    return o as R | PrepaidDeclined
  }
  return {
    encrypt: notUsed,
    decrypt: notUsed,
    fundTransfer: notUsed,
    transfer: notUsed,
    unload: notUsed,
    unloads: true,
    async sendTransfer (input) {
      return await send('prepaid.fundTransfer', 'transfer', input.clientTxnId, (moved) => {
        books.transfers.set(input.clientTxnId, { fromUrn: input.from.urn ?? '', toUrn: input.to.urn ?? '', amount: input.amount, outcome: moved ? 'moved' : 'declined' })
        return { amount: input.amount, legs: { from: input.from.urn ?? '', to: input.to.urn ?? '' } }
      })
    },
    async readTransfer (token, clientTxnId) {
      return await read('prepaid.decrypt', token, clientTxnId, (s) => ({
        kind: 'ok' as const,
        clientTxnId,
        ledgerTransactionId: s.ledgerTransactionId,
        transactionAmount: s.amount,
        senders: [{ urn: s.legs?.from, transactionAmount: s.amount }],
        receivers: [{ urn: s.legs?.to, transactionAmount: s.amount }]
      })) as TransferResult
    },
    async sendUnload (input) {
      return await send('prepaid.unload', 'unload', input.clientTxnId, (moved) => {
        books.unloads.set(input.clientTxnId, { urn: urnOfCustomerId(input.customerId), total: input.amount + input.fee, outcome: moved ? 'moved' : 'declined' })
        return { amount: input.amount, legs: null }
      })
    },
    async readUnload (token, clientTxnId) {
      return await read('prepaid.decrypt', token, clientTxnId, (s) => ({
        kind: 'ok' as const, clientTxnId, ledgerTransactionId: s.ledgerTransactionId, transactionAmount: s.amount
      })) as UnloadResult
    },
    async close () {}
  }
}

/** The simulation's customers are known to the platform as `C` + their urn. */
export function customerIdOf (urn: string): string {
  return `C${urn}`
}

function urnOfCustomerId (customerId: string): string {
  return customerId.startsWith('C') ? customerId.slice(1) : customerId
}
