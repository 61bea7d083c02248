// Bounded load against a listening extauth: closed loop (N workers, each sends when its last answer came)
// and open loop (a fixed rate, whatever the answers do). Every request is recorded: when it was sent, how
// long the answer took at the client, its status and response code, or the socket error.
import { subscribe } from 'node:diagnostics_channel'
import { Pool, request as undiciRequest } from 'undici'
import { platformHeaders } from './config.js'

export const AUTH_PATH = '/api/v1/externalAuth'

export interface Sample {
  /** performance.now() when the request was handed to the client */
  sentAt: number
  /** ms from sentAt to the full answer (or the error) */
  ms: number
  /**
   * ms from the moment the request's bytes went onto the socket to the full answer: the time the server
   * had it (sentAt..wire is the time spent waiting for a free connection in the client's own pool).
   * NaN when it never left the client's queue.
   */
  wireMs: number
  /** performance.now() when the request's bytes went onto the socket; NaN when they never did */
  wireAt: number
  status: number
  /** responseCode of the answer ('' when none) */
  code: string
  body: Record<string, unknown> | null
  /** the request body sent */
  sent: Record<string, unknown>
  /** socket or parse error, when there was no answer */
  error?: string
}

// When each request's headers were written to its socket, keyed by an `x-load-seq` header of our own.
const wireAt = new Map<string, number>()
let subscribed = false
function trackWire (): void {
  if (subscribed) return
  subscribed = true
  subscribe('undici:client:sendHeaders', (message) => {
    const m = /\r\nx-load-seq: (\d+)\r\n/.exec((message as { headers: string }).headers)
    if (m !== null) wireAt.set(m[1] as string, performance.now())
  })
}
let loadSeq = 0

export interface PostOptions {
  headers?: Record<string, string>
  /** the caller gives up after this long, as the platform does at 2000 ms (aborts, counted as an error) */
  timeoutMs?: number
}

export async function postAuth (pool: Pool, body: Record<string, unknown>, opts: PostOptions = {}): Promise<Sample> {
  trackWire()
  const seq = String(++loadSeq)
  const headers = { ...(opts.headers ?? platformHeaders()), 'x-load-seq': seq }
  const sentAt = performance.now()
  let onWireAt = NaN
  const wire = (end: number): number => {
    const w = wireAt.get(seq)
    wireAt.delete(seq)
    onWireAt = w ?? NaN
    return w === undefined ? NaN : end - w
  }
  try {
    const res = await pool.request({
      method: 'POST',
      path: AUTH_PATH,
      headers,
      body: JSON.stringify(body),
      ...(opts.timeoutMs !== undefined ? { signal: AbortSignal.timeout(opts.timeoutMs) } : {})
    })
    const text = await res.body.text()
    const end = performance.now()
    let parsed: Record<string, unknown> | null = null
    try { parsed = JSON.parse(text) as Record<string, unknown> } catch {}
    const wireMs = wire(end)
    return { sentAt, ms: end - sentAt, wireMs, wireAt: onWireAt, status: res.statusCode, code: typeof parsed?.responseCode === 'string' ? parsed.responseCode : '', body: parsed, sent: body }
  } catch (err) {
    const end = performance.now()
    const e = err as Error & { code?: string }
    const wireMs = wire(end)
    return { sentAt, ms: end - sentAt, wireMs, wireAt: onWireAt, status: 0, code: '', body: null, sent: body, error: err instanceof DOMException ? err.name : (e.code ?? e.message) }
  }
}

export interface ClosedLoopOptions {
  concurrency: number
  durationMs: number
  /** stop early after this many requests */
  requestsMax?: number
  body: (i: number) => Record<string, unknown>
  /** a worker stops when this returns true (checked before each request) */
  stop?: () => boolean
  post?: PostOptions
  /** called with each answer as it comes */
  onSample?: (s: Sample) => void
}

export async function closedLoop (pool: Pool, opts: ClosedLoopOptions): Promise<Sample[]> {
  const out: Sample[] = []
  const until = performance.now() + opts.durationMs
  const max = opts.requestsMax ?? Number.MAX_SAFE_INTEGER
  let i = 0
  const worker = async (): Promise<void> => {
    while (performance.now() < until && i < max && opts.stop?.() !== true) {
      const s = await postAuth(pool, opts.body(i++), opts.post)
      out.push(s)
      opts.onSample?.(s)
    }
  }
  await Promise.all(Array.from({ length: opts.concurrency }, worker))
  return out
}

export interface OpenLoopOptions {
  ratePerSec: number
  durationMs: number
  body: (i: number) => Record<string, unknown>
  post?: PostOptions
  /**
   * at most this many requests outstanding (on the wire or waiting for a connection); one due beyond it is
   * not sent and counted in `dropped`, as a caller with a bounded queue would. It keeps the client's own
   * cost bounded, so that on a small machine the client does not starve the server it measures.
   */
  outstandingMax?: number
}

/** Sends at a fixed rate (in small batches every 5 ms) for the duration; waits for every answer. */
export async function openLoop (pool: Pool, opts: OpenLoopOptions): Promise<{ samples: Sample[], sent: number, dropped: number, elapsedMs: number }> {
  const pending: Array<Promise<Sample>> = []
  const t0 = performance.now()
  let due = 0
  let sent = 0
  let dropped = 0
  let outstanding = 0
  const max = opts.outstandingMax ?? Number.MAX_SAFE_INTEGER
  const total = Math.round(opts.ratePerSec * opts.durationMs / 1000)
  while (due < total) {
    const elapsed = performance.now() - t0
    if (elapsed >= opts.durationMs + 1000) break // the client itself cannot keep up: stop, never run unbounded
    const now = Math.min(total, Math.floor(elapsed * opts.ratePerSec / 1000))
    for (; due < now; due++) {
      if (outstanding >= max) { dropped++; continue }
      outstanding++
      pending.push(postAuth(pool, opts.body(sent++), opts.post).finally(() => { outstanding-- }))
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const elapsedMs = performance.now() - t0
  return { samples: await Promise.all(pending), sent, dropped, elapsedMs }
}

export function percentile (values: number[], p: number): number {
  if (values.length === 0) return NaN
  const s = [...values].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)] ?? NaN
}

export function countBy<T> (items: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const x of items) { const k = key(x); out[k] = (out[k] ?? 0) + 1 }
  return out
}

/** Debit amount as the contract defines it: (billingAmount, else transactionAmount) + fee, from digit strings. */
export function debitOf (body: Record<string, unknown>): number {
  const n = (v: unknown): number | undefined => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : undefined)
  return (n(body.billingAmount) ?? n(body.transactionAmount) ?? 0) + (n(body.fee) ?? 0)
}

/** The admin API of a listening extauth (bearer token of the tests). */
export function adminApi (adminUrl: string, token: string): {
  call: (method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown) => Promise<{ status: number, body: Record<string, unknown>, text: string }>
  fund: (urn: string, amount: number, reference?: string) => Promise<void>
  available: (urn: string) => Promise<number>
  metrics: () => Promise<string>
} {
  const call = async (method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown): Promise<{ status: number, body: Record<string, unknown>, text: string }> => {
    const res = await undiciRequest(adminUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await res.body.text()
    let parsed: Record<string, unknown> = {}
    try { parsed = JSON.parse(text) as Record<string, unknown> } catch {}
    return { status: res.statusCode, body: parsed, text }
  }
  return {
    call,
    fund: async (urn, amount, reference = `open-${urn}`) => {
      const c = await call('PUT', `/admin/v1/customers/${urn}`, {})
      if (c.status !== 200) throw new Error(`PUT customer ${urn}: ${c.status} ${c.text}`)
      const r = await call('POST', `/admin/v1/customers/${urn}/credits`, { amount: String(amount), reference })
      if (r.status !== 200) throw new Error(`credit ${urn}: ${r.status} ${r.text}`)
    },
    available: async (urn) => {
      const r = await call('GET', `/admin/v1/customers/${urn}`)
      if (r.status !== 200) throw new Error(`GET customer ${urn}: ${r.status} ${r.text}`)
      return Number(r.body.available)
    },
    metrics: async () => (await call('GET', '/metrics')).text
  }
}

export function newPool (url: string, connections = 64): Pool {
  return new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
}

interface Teardown { teardown: (fn: () => unknown) => void }

/** Listens on a free loopback port; returns a pool to it, closed at teardown. */
export async function listenApp (t: Teardown, app: { listen: (o: { host: string, port: number }) => Promise<string> }, connections = 64): Promise<{ url: string, pool: Pool }> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  const url = address.replace('localhost', '127.0.0.1')
  const pool = newPool(url, connections)
  t.teardown(async () => { await pool.close() })
  return { url, pool }
}
