// One keep-alive undici Pool per party, and the single POST-JSON path every adapter call goes through.
// The call is bounded by the party's totalTimeoutMs and by the caller's budget/signal, whichever ends first.
// A POST is repeated only when the connection was never made: once bytes may have left, the party may
// have moved money, and deciding what to do next is the caller's (with its idempotency reference).
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import type { Logger } from 'pino'
import type { BaseUrl, ResolvedHttpOptions } from './options.js'
import { failed } from './result.js'
import type { Answer, Failed } from './result.js'

export interface CallOptions {
  /** aborts the call, e.g. when the caller's own deadline passes; reported as a timeout */
  signal?: AbortSignal
  /** what is left of the caller's time; the call never takes longer than this nor than totalTimeoutMs */
  budgetMs?: number
}

export interface JsonResponse {
  kind: 'response'
  status: number
  /** undefined when the body was not JSON */
  json: unknown
  attempts: number
}

export interface PartyClient {
  readonly party: string
  postJson (op: string, path: string, headers: Record<string, string>, body: unknown, call?: CallOptions): Promise<JsonResponse | Failed>
  close (): Promise<void>
}

// Errors raised before a connection exists (or on a closed pool): the request cannot have reached the party.
const NEVER_LEFT = new Set([
  'ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED', 'UND_ERR_DESTROYED'
])
const TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT'])
const RETRY_PAUSE_MS = 25

function errorCode (err: unknown): string {
  if (typeof err !== 'object' || err === null) return 'UNKNOWN'
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string') return code
  // net's happy-eyeballs connect reports an AggregateError of the per-address attempts
  const inner = (err as { errors?: unknown }).errors
  if (Array.isArray(inner) && inner.length > 0) return errorCode(inner[0])
  return (err as { name?: unknown }).name === 'AbortError' ? 'ABORTED' : 'UNKNOWN'
}

class TooLarge extends Error {}

function isAborted (signal: AbortSignal | undefined): boolean {
  return signal?.aborted ?? false
}

async function readText (body: AsyncIterable<Buffer> & { destroy: (err?: Error) => unknown }, bytesMax: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > bytesMax) {
      body.destroy()
      throw new TooLarge()
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function parseJson (text: string): unknown {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

export function createPartyClient (party: string, base: BaseUrl, http: ResolvedHttpOptions, logger: Logger): PartyClient {
  const pool = new Pool(base.origin, {
    connections: http.connections,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    headersTimeout: http.headersTimeoutMs,
    bodyTimeout: http.bodyTimeoutMs,
    connect: { timeout: http.connectTimeoutMs }
  })

  async function postJson (
    op: string, path: string, headers: Record<string, string>, body: unknown, call: CallOptions = {}
  ): Promise<JsonResponse | Failed> {
    // whole milliseconds, rounded down: never past the caller's deadline
    const budgetMs = Math.floor(Math.min(http.totalTimeoutMs, call.budgetMs ?? Number.POSITIVE_INFINITY))
    if (isAborted(call.signal) || !(budgetMs >= 1)) {
      logger.warn({ op, reason: 'timeout', attempts: 0 }, 'outbound call not started: no budget left')
      return failed('timeout', { retryable: true, sent: false, attempts: 0, detail: 'budget spent before sending' })
    }
    const budget = AbortSignal.timeout(budgetMs)
    const callSignal = call.signal === undefined ? budget : AbortSignal.any([call.signal, budget])
    const payload = JSON.stringify(body)
    const started = performance.now()
    let attempts = 0

    for (;;) {
      attempts++
      // undici's own headers timer ticks at 0.5 to 1 s resolution; this one is exact, so sub-second limits
      // hold. It runs from the attempt's start: on a reused keep-alive socket that is when the request leaves.
      const waitHeaders = new AbortController()
      const timer = setTimeout(() => waitHeaders.abort(), http.headersTimeoutMs)
      const signal = AbortSignal.any([callSignal, waitHeaders.signal])
      try {
        const res = await pool.request({
          path: base.prefix + path,
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
          body: payload,
          signal
        })
        clearTimeout(timer)
        const text = await readText(res.body, http.responseBytesMax)
        const json = parseJson(text)
        logger.debug({ op, attempt: attempts, httpStatus: res.statusCode, ms: Math.round(performance.now() - started) }, 'outbound answer')
        return { kind: 'response', status: res.statusCode, json, attempts }
      } catch (err) {
        clearTimeout(timer)
        const code = errorCode(err)
        const ms = Math.round(performance.now() - started)
        if (err instanceof TooLarge) {
          logger.warn({ op, attempt: attempts, ms }, 'outbound answer too large')
          // the party had the request: what it did is unknown, so the caller repeats rather than gives up
          return failed('malformed', { retryable: true, sent: true, attempts, detail: `answer over ${http.responseBytesMax} bytes` })
        }
        const neverLeft = NEVER_LEFT.has(code)
        if (signal.aborted) {
          const detail = isAborted(call.signal)
            ? 'aborted by caller'
            : budget.aborted ? `budget of ${budgetMs} ms spent` : 'UND_ERR_HEADERS_TIMEOUT'
          logger.warn({ op, attempt: attempts, ms, reason: 'timeout', detail }, 'outbound call timed out')
          return failed('timeout', { retryable: true, sent: !neverLeft, attempts, detail })
        }
        const remaining = budgetMs - (performance.now() - started)
        if (neverLeft && attempts <= http.connectRetriesMax && remaining > RETRY_PAUSE_MS) {
          logger.info({ op, attempt: attempts, code }, 'connect failed, trying again')
          try {
            await sleep(RETRY_PAUSE_MS, undefined, { signal: callSignal })
          } catch {
            return failed('timeout', { retryable: true, sent: false, attempts, detail: 'budget spent while retrying connect' })
          }
          continue
        }
        const reason = TIMEOUTS.has(code) ? 'timeout' : 'transport'
        logger.warn({ op, attempt: attempts, ms, reason, code }, 'outbound call failed')
        return failed(reason, { retryable: true, sent: !neverLeft, attempts, detail: code })
      }
    }
  }

  return {
    party,
    postJson,
    async close () {
      await pool.close()
    }
  }
}

/** What an adapter's parser says of a JSON answer. */
export type Parsed<R> = R | { kind: 'unparsable', detail: string }

/**
 * The parties' own samples write an empty value as "": an object field holding "" is taken as absent
 * (so an optional field that is "" is simply not there, and a required one that is "" is missing).
 */
export function blankToAbsent (json: unknown): unknown {
  if (Array.isArray(json)) return json.map(blankToAbsent)
  if (typeof json !== 'object' || json === null) return json
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(json)) if (v !== '') out[k] = blankToAbsent(v)
  return out
}

/**
 * The parties signal outcomes in the body with HTTP 200. A body that parses to a decline is returned
 * whatever the HTTP status (a money call still reads one on a non-2xx as uncertain: uncertainDecline()).
 * Any other non-2xx is an http_status failure, retryable whatever its class: a 4xx does not prove the
 * party did nothing (a proxy in front of it may answer for it, or the party after acting), and what
 * causes one (a wrong path, refused credentials, a rate limit) is put right without the caller, after
 * which the same call, with the same reference, goes through. So the caller keeps what it holds and
 * repeats, as for a 5xx or no answer at all; never "do not repeat" while money waits on a repeat.
 */
export function interpret<R extends Answer> (
  res: JsonResponse, parse: (json: unknown) => Parsed<R>
): R | Failed {
  const ok2xx = res.status >= 200 && res.status < 300
  const parsed: Parsed<R> = res.json === undefined ? { kind: 'unparsable', detail: 'not JSON' } : parse(blankToAbsent(res.json))
  if (ok2xx) {
    // the party had the request and answered something we cannot read: it may have acted, so the
    // caller repeats the call with the same reference (the party dedupes it) rather than gives up
    if (parsed.kind === 'unparsable') {
      return failed('malformed', { retryable: true, sent: true, attempts: res.attempts, detail: parsed.detail, httpStatus: res.status })
    }
    return parsed
  }
  if (parsed.kind === 'declined') return { ...parsed, httpStatus: res.status }
  return failed('http_status', { retryable: true, sent: true, attempts: res.attempts, detail: `HTTP ${res.status}`, httpStatus: res.status })
}
