// An issuer (prepaid platform) simulator for our own endpoint: it makes realistic External Authorization
// bodies from a seed and sends them with the platform's headers. Load scripts and demos use it; the
// same seed gives the same traffic, so choose a new seed per run unless replays are the point.
import { randomInt } from 'node:crypto'
import { Pool } from 'undici'
import type { AuthRequest } from '../domain/request.js'
import { digits, intBetween, pick, seededRandom } from './prng.js'

import { SPEC_CHANNELS as CHANNELS, SPEC_EXTERNAL_AUTH_PATH as EXTERNAL_AUTH_PATH } from './spec-values.js'

export { CHANNELS, EXTERNAL_AUTH_PATH }
export { cardholderJourney, type JourneyStep } from './cardholder.js'
export type Channel = typeof CHANNELS[number]

export interface IssuerCard {
  urn: string
  customerId?: string
  last4Digits: string
}

export interface AuthBodyOptions {
  /** default: random (so two runs do not collide on transactionReferenceNumber) */
  seed?: number
  /** the cards to draw from; default: ten made-up cards derived from the seed */
  cards?: readonly IssuerCard[]
  channels?: readonly Channel[]
  /** minor units, inclusive; default 100 .. 500000 */
  amountMin?: number
  amountMax?: number
  /** ISO 4217 numeric; default 356 */
  currencyCode?: string
  /** share of requests that carry a fee, 0..1; default 0.2 */
  feeShare?: number
  /** share of cross-border requests (billingCurrency and billingAmount), 0..1; default 0.05 */
  crossBorderShare?: number
  entityId?: string
}

const NETWORKS = ['RUPAY', 'VISA', 'MASTERCARD'] as const
const MCC_BY_CHANNEL: Record<Channel, readonly string[]> = {
  POS: ['5411', '5812', '5999', '5311', '5541'],
  'POS-Contactless': ['5411', '5814', '4111', '5499'],
  ECOM: ['5732', '5942', '4722', '7995', '5999'],
  ATM: ['6011']
}
const MERCHANTS = ['FRESH MART', 'CITY CAFE', 'METRO RAIL', 'BOOK NOOK', 'FUEL POINT', 'E SHOP', 'TRAVEL DESK']
const FOREIGN_CURRENCIES = ['840', '978', '826', '784']

function checkRange (name: string, v: number, min: number, max: number): void {
  if (!Number.isFinite(v) || v < min || v > max) throw new Error(`issuer option ${name} must be from ${min} to ${max}`)
}

/** A generator of External Authorization bodies; each call gives the next one of the seeded sequence. */
export function createAuthBodyGenerator (opts: AuthBodyOptions = {}): () => AuthRequest {
  const seed = opts.seed ?? randomInt(0, 2 ** 31)
  const rnd = seededRandom(seed)
  const amountMin = opts.amountMin ?? 100
  const amountMax = opts.amountMax ?? 500_000
  if (!Number.isSafeInteger(amountMin) || !Number.isSafeInteger(amountMax) || amountMin < 1 || amountMax < amountMin) {
    throw new Error('issuer options amountMin and amountMax must be integers (minor units) with 1 <= amountMin <= amountMax')
  }
  const feeShare = opts.feeShare ?? 0.2
  const crossBorderShare = opts.crossBorderShare ?? 0.05
  checkRange('feeShare', feeShare, 0, 1)
  checkRange('crossBorderShare', crossBorderShare, 0, 1)
  const channels = opts.channels ?? CHANNELS
  if (channels.length === 0) throw new Error('issuer option channels must not be empty')
  const currencyCode = opts.currencyCode ?? '356'
  const cards = opts.cards ?? Array.from({ length: 10 }, (_, i) => ({
    urn: `9${digits(rnd, 10)}`,
    customerId: `CUST${String(i + 1).padStart(4, '0')}`,
    last4Digits: digits(rnd, 4)
  }))
  if (cards.length === 0) throw new Error('issuer option cards must not be empty')
  const run = seed.toString(36).toUpperCase()
  let n = 0

  return () => {
    n++
    const card = pick(rnd, cards)
    const channel = pick(rnd, channels)
    const amount = intBetween(rnd, amountMin, amountMax)
    const body: AuthRequest = {
      urn: card.urn,
      merchantName: channel === 'ATM' ? 'ATM CASH' : pick(rnd, MERCHANTS),
      terminalId: `T${digits(rnd, 7)}`,
      mcc: pick(rnd, MCC_BY_CHANNEL[channel]),
      // a 6-digit audit number that wraps like the issuer's counter
      systemTraceAuditNumber: String(((seed + n) % 999_999) + 1).padStart(6, '0'),
      cardNetwork: pick(rnd, NETWORKS),
      channel,
      merchantId: `M${digits(rnd, 9)}`,
      transactionAmount: String(amount),
      transactionReferenceNumber: `TRN${run}${String(n).padStart(9, '0')}`,
      currencyCode,
      last4Digits: card.last4Digits,
      originalRrn: digits(rnd, 12)
    }
    if (card.customerId !== undefined) body.customerId = card.customerId
    if (rnd() < feeShare) body.fee = String(intBetween(rnd, 100, 2000))
    if (rnd() < crossBorderShare) {
      body.billingCurrency = pick(rnd, FOREIGN_CURRENCIES)
      body.billingAmount = String(intBetween(rnd, Math.max(1, Math.floor(amount / 90)), Math.max(1, Math.floor(amount / 70))))
    }
    if (opts.entityId !== undefined) body.entityId = opts.entityId
    return body
  }
}

export interface IssuerHeaders {
  /** X-Consumer-Custom-ID */
  consumerKey: string
  clientId: string
  bankId: string
  entityId?: string
}

export interface IssuerOptions extends IssuerHeaders {
  /** our service's base URL (the path before /api/v1/externalAuth, if any, included) */
  url: string
  /** default 2000, the platform's own limit */
  timeoutMs?: number
  /** default 64 */
  connections?: number
}

export type ExternalAuthOutcome =
  | { kind: 'answer', status: number, body: unknown, ms: number }
  | { kind: 'error', code: string, ms: number }

export interface Issuer {
  send (body: AuthRequest): Promise<ExternalAuthOutcome>
  close (): Promise<void>
}

export function issuerHeaders (h: IssuerHeaders): Record<string, string> {
  const out: Record<string, string> = {
    'content-type': 'application/json',
    'X-Consumer-Custom-ID': h.consumerKey,
    clientId: h.clientId,
    bankId: h.bankId
  }
  if (h.entityId !== undefined) out.entityId = h.entityId
  return out
}

/** A keep-alive sender of External Authorization calls, timing each from send to parsed answer. */
export function createIssuer (opts: IssuerOptions): Issuer {
  const url = new URL(opts.url)
  const path = url.pathname.replace(/\/+$/, '') + EXTERNAL_AUTH_PATH
  const timeoutMs = opts.timeoutMs ?? 2000
  const pool = new Pool(url.origin, { connections: opts.connections ?? 64, headersTimeout: timeoutMs, bodyTimeout: timeoutMs })
  const headers = issuerHeaders(opts)

  return {
    async send (body) {
      const started = performance.now()
      try {
        const res = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) })
        const text = await res.body.text()
        let parsed: unknown
        try {
          parsed = JSON.parse(text) as unknown
        } catch {
          parsed = text
        }
        return { kind: 'answer', status: res.statusCode, body: parsed, ms: performance.now() - started }
      } catch (err) {
        const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : (err as Error).name
        return { kind: 'error', code, ms: performance.now() - started }
      }
    },
    close: () => pool.close()
  }
}

/** One call on a connection of its own: for demos and smoke checks (use createIssuer for load). */
export async function sendExternalAuth (opts: IssuerOptions, body: AuthRequest): Promise<ExternalAuthOutcome> {
  const issuer = createIssuer({ ...opts, connections: 1 })
  try {
    return await issuer.send(body)
  } finally {
    await issuer.close()
  }
}
