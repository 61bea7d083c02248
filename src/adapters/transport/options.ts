// Transport options shared by every adapter, validated once when the adapter is built, naming the option.
import type { Logger } from 'pino'
import { AdapterOptionError } from './errors.js'

/** One finished call to a party, for metrics: which party and call, how it ended, how long it took. */
export interface AdapterCall {
  party: string
  call: string
  outcome: 'ok' | 'declined' | 'failed'
  seconds: number
}

/** The calls each party's adapter makes, as AdapterCall.call names them (transfer: the whole prepaid chain). */
export const ADAPTER_CALLS: Readonly<Record<'gateway' | 'risk' | 'prepaid', readonly string[]>> = Object.freeze({
  gateway: ['authorize', 'preAuthCompletion', 'preAuthCancellation', 'generateOtp', 'resendOtp', 'verifyOtp'],
  risk: ['analyse'],
  prepaid: ['encrypt', 'decrypt', 'fundTransfer', 'transfer']
})

/**
 * What every adapter is handed: a pino logger (its redaction is the caller's; the adapters log no secrets),
 * and optionally an observer of every finished call (the service counts them in its metrics).
 */
export interface AdapterDeps {
  logger: Logger
  onCall?: (call: AdapterCall) => void
}

export interface HttpOptions {
  /** TCP (and TLS) connect limit */
  connectTimeoutMs?: number
  /** from the attempt's start (a connect included) to response headers received; exact to the millisecond */
  headersTimeoutMs?: number
  /** longest gap between two chunks of the response body (undici's timer: about 1 s resolution) */
  bodyTimeoutMs?: number
  /** limit for one call from start to parsed answer, connect retries included; a caller can only shorten it */
  totalTimeoutMs?: number
  /** keep-alive sockets held open to the party */
  connections?: number
  keepAliveTimeoutMs?: number
  /** answers larger than this are treated as malformed rather than buffered */
  responseBytesMax?: number
  /** extra attempts after a connect failure (the request never left, so a repeat cannot double-spend) */
  connectRetriesMax?: number
}

export type ResolvedHttpOptions = Required<HttpOptions>

export const HTTP_OPTION_NAMES = [
  'connectTimeoutMs', 'headersTimeoutMs', 'bodyTimeoutMs', 'totalTimeoutMs',
  'connections', 'keepAliveTimeoutMs', 'responseBytesMax', 'connectRetriesMax'
] as const

export function resolveHttpOptions (party: string, given: HttpOptions, defaults: ResolvedHttpOptions): ResolvedHttpOptions {
  const out = { ...defaults }
  for (const name of HTTP_OPTION_NAMES) {
    const v = given[name]
    if (v === undefined) continue
    const min = name === 'connectRetriesMax' ? 0 : 1
    if (!Number.isSafeInteger(v) || v < min) throw new AdapterOptionError(`${party}.${name}: an integer >= ${min}`)
    out[name] = v
  }
  return out
}

export interface BaseUrl {
  /** scheme, host and port: one undici Pool per origin */
  origin: string
  /** path the party is mounted under, without a trailing slash ('' when none) */
  prefix: string
}

export function parseBaseUrl (party: string, value: string): BaseUrl {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new AdapterOptionError(`${party}.baseUrl: not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AdapterOptionError(`${party}.baseUrl: http or https only`)
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new AdapterOptionError(`${party}.baseUrl: no query, fragment or credentials`)
  }
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') }
}

export function requireText (party: string, name: string, value: unknown, pattern?: RegExp): string {
  if (typeof value !== 'string' || value.trim() === '') throw new AdapterOptionError(`${party}.${name}: required`)
  if (pattern !== undefined && !pattern.test(value)) throw new AdapterOptionError(`${party}.${name}: must match ${String(pattern)}`)
  return value
}
