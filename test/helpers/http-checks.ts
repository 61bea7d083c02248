// Shared by the HTTP tests (test/http/): the answer-shape check, short-hands for the admin API, the stores
// to run on, and store wrappers that fail, hang or answer late.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import type { TAP } from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { adminHeaders, authBody, platformHeaders } from './config.js'
import { sharedRedisStore } from './redis.js'
import { build, type BuildOptions, type Built } from './app.js'

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * build(t) for the HTTP tests. Load shedding is off in the tests' configuration (testConfig): an app under
 * test sheds only when its test turns shedding on, and then a shed request is an answer to count (05,
 * extauth_shed_total), never one to send again.
 */
export async function buildApp (t: Teardown, opts: BuildOptions = {}): Promise<Built> {
  return await build(t, opts)
}

/** The spec's response-code table, written out here so the tests do not take the words from src/. */
export const DESCRIPTION: Record<string, string> = {
  '00': 'TRANSACTION_APPROVED',
  '05': 'DO_NOT_HONOR',
  14: 'CARD_NOT_FOUND',
  34: 'SUSPECTED_FRAUD',
  41: 'LOST_CARD',
  43: 'STOLEN_CARD',
  51: 'NO_SUFFICIENT_FUNDS',
  61: 'EXCEEDS_WITHDRAWAL_AMOUNT_LIMIT',
  65: 'EXCEEDS_WITHDRAWAL_FREQUENCY_LIMIT'
}

export const ANSWER_KEYS = ['currencyCode', 'responseCode', 'responseDateTime', 'responseDescription', 'transactionAmount']

export interface Answer {
  responseCode: string
  responseDescription: string
  responseDateTime: string
  transactionAmount: string
  currencyCode: string
}

export interface Expect {
  status: number
  code: string
  /** the transactionAmount expected in the answer; not checked when absent */
  amount?: string
  /** the currencyCode expected; '356' (DEFAULT_CURRENCY of the tests) when absent */
  currency?: string
}

type Asserts = Pick<TAP, 'equal' | 'same' | 'match'>

/** Checks the one answer shape of the (README "The decision") and returns the parsed answer. */
export function checkAnswer (t: Asserts, status: number, contentType: unknown, text: string, want: Expect, label = ''): Answer {
  const p = label === '' ? '' : `${label}: `
  t.equal(status, want.status, `${p}HTTP ${want.status}`)
  t.match(String(contentType), /^application\/json/, `${p}JSON content type`)
  let a: Answer
  try {
    a = JSON.parse(text) as Answer
  } catch {
    t.equal(text, '<a JSON answer>', `${p}body is JSON`)
    return { responseCode: '', responseDescription: '', responseDateTime: '', transactionAmount: '', currencyCode: '' }
  }
  t.same(Object.keys(a).sort(), ANSWER_KEYS, `${p}exactly the five answer fields`)
  t.equal(a.responseCode, want.code, `${p}responseCode ${want.code}`)
  t.equal(a.responseDescription, DESCRIPTION[want.code], `${p}responseDescription is the table's word`)
  t.match(a.responseDateTime, /^[0-9]{14}$/, `${p}responseDateTime has 14 digits`)
  if (want.amount !== undefined) t.equal(a.transactionAmount, want.amount, `${p}transactionAmount echoed`)
  t.equal(typeof a.transactionAmount, 'string', `${p}transactionAmount is a string`)
  t.equal(a.currencyCode, want.currency ?? '356', `${p}currencyCode`)
  return a
}

export function checkInjected (t: Asserts, res: LightMyRequestResponse, want: Expect, label = ''): Answer {
  return checkAnswer(t, res.statusCode, res.headers['content-type'], res.body, want, label)
}

/**
 * inject() runs on promises alone: a test sending one request after another would hardly let the event
 * loop turn, and under-pressure would see no event-loop samples.
 */
export async function yieldToLoop (): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve))
}

export const AUTH_PATH = '/api/v1/externalAuth'

/** POST /api/v1/externalAuth through inject; a string payload is sent as it is. */
export async function auth (app: FastifyInstance, body: unknown, opts: { headers?: Record<string, string>, remoteAddress?: string } = {}): Promise<LightMyRequestResponse> {
  await yieldToLoop()
  return await app.inject({
    method: 'POST',
    url: AUTH_PATH,
    headers: opts.headers ?? platformHeaders(),
    payload: typeof body === 'string' ? body : JSON.stringify(body),
    ...(opts.remoteAddress !== undefined ? { remoteAddress: opts.remoteAddress } : {})
  })
}

export interface CustomerView { urn: string, customerId: string | null, status: string, available: string, cards: Record<string, string> }

/** Short-hands for the admin API; each fails loudly when the call does not answer 200. */
export function adminClient (app: FastifyInstance): {
  call: (method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  customer: (urn: string, body?: Record<string, unknown>) => Promise<CustomerView>
  card: (urn: string, last4: string, status: string) => Promise<CustomerView>
  credit: (urn: string, amount: number, reference?: string) => Promise<void>
  available: (urn: string) => Promise<string>
  decision: (urn: string, ref: string) => Promise<Record<string, unknown> | null>
} {
  let seq = 0
  const call = async (method: 'GET' | 'PUT' | 'PATCH' | 'POST', url: string, payload?: unknown, headers: Record<string, string> = adminHeaders): Promise<LightMyRequestResponse> => {
    await yieldToLoop()
    if (payload === undefined) {
      // no body, so no content-type: Fastify refuses an empty body declared as JSON
      const { 'content-type': _ct, ...rest } = headers
      return await app.inject({ method, url, headers: rest })
    }
    return await app.inject({ method, url, headers, payload: JSON.stringify(payload) })
  }
  const ok = (res: LightMyRequestResponse, what: string): unknown => {
    if (res.statusCode !== 200) throw new Error(`${what}: HTTP ${res.statusCode} ${res.body}`)
    return res.json()
  }
  return {
    call,
    customer: async (urn, body = {}) => ok(await call('PUT', `/admin/v1/customers/${urn}`, body), 'put customer') as CustomerView,
    card: async (urn, last4, status) => ok(await call('PUT', `/admin/v1/customers/${urn}/cards/${last4}`, { status }), 'put card') as CustomerView,
    credit: async (urn, amount, reference) => {
      ok(await call('POST', `/admin/v1/customers/${urn}/credits`, { amount: String(amount), reference: reference ?? `credit-${urn}-${++seq}` }), 'credit')
    },
    available: async (urn) => (ok(await call('GET', `/admin/v1/customers/${urn}`), 'get customer') as CustomerView).available,
    decision: async (urn, ref) => {
      const res = await call('GET', `/admin/v1/customers/${urn}/decisions/${ref}`)
      if (res.statusCode === 404) return null
      return ok(res, 'get decision') as Record<string, unknown>
    }
  }
}

export interface StoreKind {
  name: 'memory' | 'redis'
  make: (t: Teardown) => Promise<Store>
}

/** The two stores the money-moving rows run on; the Redis one has a key prefix of its own, deleted after. */
export const STORE_KINDS: StoreKind[] = [
  { name: 'memory', make: async () => new MemoryStore() },
  { name: 'redis', make: async (t) => await sharedRedisStore(t) }
]

/** A memory store whose authorize never answers (the deadline guard must). */
export function hangingStore (): MemoryStore {
  const store = new MemoryStore()
  store.authorize = async () => await new Promise<never>(() => {})
  return store
}

/** A memory store whose authorize fails (a store error must answer 05). */
export function failingStore (): MemoryStore {
  const store = new MemoryStore()
  store.authorize = async () => { throw new Error('store exploded') }
  return store
}

/**
 * Makes `store` late past a deadline, for as long as the test wants: 'commit-late' holds each authorize
 * before the store decides (the decision lands after the answer went out); 'reply-late' lets the store
 * decide at once and holds only its reply (the decision was committed, its answer lost to the deadline
 * guard). Held calls go on when the test calls release(), and later calls are no longer held: the guard
 * answers first however slow the machine, with no race between two delays.
 */
export function lateStore<S extends Store> (store: S, mode: 'commit-late' | 'reply-late'): { store: S, release: () => void, settled: () => Promise<void> } {
  const authorize = store.authorize.bind(store)
  const inFlight = new Set<Promise<unknown>>()
  let release = (): void => {}
  const released = new Promise<void>((resolve) => { release = resolve })
  let isReleased = false
  void released.then(() => { isReleased = true })
  store.authorize = async (input) => {
    const p = (async () => {
      if (mode === 'commit-late' && !isReleased) await released
      const r = await authorize(input)
      if (mode === 'reply-late' && !isReleased) await released
      return r
    })()
    inFlight.add(p)
    try {
      return await p
    } finally {
      inFlight.delete(p)
    }
  }
  return { store, release, settled: async () => { await Promise.allSettled([...inFlight]) } }
}

/** Reads one sample of a Prometheus text exposition; null when the series is absent. */
export function metricValue (text: string, series: string): number | null {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const i = line.lastIndexOf(' ')
    if (i > 0 && line.slice(0, i) === series) return Number(line.slice(i + 1))
  }
  return null
}

/** A temporary RULES_DIR holding `files` (name → text), removed at teardown. */
export async function rulesDir (t: Teardown, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-rules-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
  return dir
}

let urnSeq = 0
/** A urn no other test in this process uses (urn is string(20)). */
export function freshUrn (): string {
  urnSeq++
  return `U${process.pid % 100000}${Date.now() % 100000}${urnSeq}`.slice(0, 20)
}

export { authBody, platformHeaders, adminHeaders }
