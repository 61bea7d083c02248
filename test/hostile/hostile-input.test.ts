// Garbage at POST /api/v1/externalAuth: a seeded generator of bodies (wrong types, huge and deeply nested
// values, unicode and control characters, duplicate keys, __proto__/constructor keys, numbers where strings
// are expected, truncated JSON, wrong content types, empty bodies) and header variants (missing,
// duplicated, huge, names in other case). Never a 5xx, never a crash, always the contract's five-field
// answer, and the funded customer's balance moves only by the approvals that were answered (a mutation
// that happens to leave a valid authorization is decided like any other, and accounted for).
// 10,000 cases through inject, then a sample over real HTTP and a few broken HTTP messages on a raw socket.
// The seed is printed; TEST_SEED=<n> runs the same cases again.
import t, { type TAP } from 'tap'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { build } from '../helpers/app.js'
import { ADMIN_TOKEN, BANK_ID, CLIENT_ID, CONSUMER_KEY, authBody } from '../helpers/config.js'
import { listenApp } from '../helpers/load.js'
import { seededRandom } from '../../src/sim/prng.js'

const SEED = process.env.TEST_SEED !== undefined ? Number(process.env.TEST_SEED) : Math.floor(Math.random() * 2 ** 31)
const CASES = Number(process.env.HOSTILE_CASES ?? 10_000)
const HTTP_CASES = 400
const URN = 'UHOSTILE1'
const OPENING = 1_000_000_000_000
const CODES: Record<string, string> = {
  '00': 'TRANSACTION_APPROVED', '05': 'DO_NOT_HONOR', 14: 'CARD_NOT_FOUND', 34: 'SUSPECTED_FRAUD', 41: 'LOST_CARD',
  43: 'STOLEN_CARD', 51: 'NO_SUFFICIENT_FUNDS', 61: 'EXCEEDS_WITHDRAWAL_AMOUNT_LIMIT', 65: 'EXCEEDS_WITHDRAWAL_FREQUENCY_LIMIT'
}
const ANSWER_KEYS = ['currencyCode', 'responseCode', 'responseDateTime', 'responseDescription', 'transactionAmount']

interface Case {
  kind: string
  payload: string | Buffer
  headers: Record<string, string | string[]>
}

const FIELDS = ['customerId', 'urn', 'merchantName', 'terminalId', 'mcc', 'systemTraceAuditNumber', 'cardNetwork', 'channel',
  'merchantId', 'transactionAmount', 'fee', 'transactionReferenceNumber', 'currencyCode', 'last4Digits', 'originalRrn',
  'orignialRrn', 'billingCurrency', 'billingAmount', 'entityId']

function generator (seed: number): () => Case {
  const r = seededRandom(seed)
  const int = (n: number): number => Math.floor(r() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T
  let n = 0
  const strange = [
    '', ' ', '\u0000', '\u0000\u0001\u001f', '\t\r\n', '\u202e1250', '١٢٥٠', '１２５０', '💳💳', '\ud800', '\udfff\ud800',
    '\u2028\u2029', 'null', 'undefined', 'NaN', '-1', '1e3', '0x10', '00000000000000000000', '9'.repeat(16), '12.50', ' 1250',
    // eslint-disable-next-line no-template-curly-in-string -- a Log4Shell probe, sent as hostile input
    '<script>alert(1)</script>', "' OR 1=1 --", '${jndi:ldap://x}', '../../etc/passwd', '%00', '\\', '"', 'POS\u0000', 'é'.repeat(30)
  ]
  const wrongType = (): unknown => pick<unknown>([0, 1250, -1, 1.5, 1e308, true, false, null, [], ['1250'], {}, { a: 1 }, [[[]]], Number.MAX_SAFE_INTEGER + 2])
  const nested = (depth: number, open: string, close: string, leaf = '1'): string => open.repeat(depth) + leaf + close.repeat(depth)
  const base = (): Record<string, unknown> => authBody({ urn: URN, transactionAmount: String(1 + int(5000)) })
  const json = (b: unknown): string => JSON.stringify(b)
  const ok = { 'content-type': 'application/json', 'x-consumer-custom-id': CONSUMER_KEY, clientid: CLIENT_ID, bankid: BANK_ID }

  const bodies: Array<[string, () => string | Buffer]> = [
    ['wrong type', () => { const b = base(); for (let i = 0; i <= int(3); i++) b[pick(FIELDS)] = wrongType(); return json(b) }],
    ['number for a string', () => { const b = base(); const f = pick(['transactionAmount', 'systemTraceAuditNumber', 'last4Digits', 'mcc', 'fee', 'currencyCode', 'billingAmount']); b[f] = Number(b[f] ?? 100); return json(b) }],
    ['strange string', () => { const b = base(); b[pick(FIELDS)] = pick(strange); return json(b) }],
    ['control characters', () => { const b = base(); b[pick(FIELDS)] = Array.from({ length: 1 + int(20) }, () => String.fromCharCode(int(32))).join(''); return json(b) }],
    ['random unicode', () => { const b = base(); b[pick(FIELDS)] = Array.from({ length: 1 + int(40) }, () => String.fromCodePoint(int(0x10ffff) & ~0x800)).join(''); return json(b) }],
    ['huge value', () => { const b = base(); b[pick(FIELDS)] = 'x'.repeat(1000 + int(14_000)); return json(b) }],
    ['over 16 KiB', () => { const b = base(); b.padding = 'p'.repeat(16 * 1024 + int(20_000)); return json(b) }],
    ['deeply nested extra', () => json(base()).replace(/}$/, `,"deep":${nested(1 + int(7000), '[', ']')}}`)],
    ['deeply nested objects', () => json(base()).replace(/}$/, `,"deep":${nested(1 + int(1500), '{"a":', '}')}}`)],
    ['nested in a field', () => json(base()).replace(/"urn":"[^"]*"/, `"urn":${nested(1 + int(3000), '[', ']')}`)],
    ['duplicate keys', () => { const f = pick(FIELDS); return json(base()).replace(/}$/, `,${JSON.stringify(f)}:${JSON.stringify(pick<unknown>([...strange, 5, null]))}}`) }],
    ['__proto__', () => json(base()).replace(/}$/, pick([',"__proto__":{"isAdmin":true}}', ',"__proto__":null}', ',"a":{"__proto__":{"x":1}}}']))],
    ['constructor', () => json(base()).replace(/}$/, pick([',"constructor":{"prototype":{"x":1}}}', ',"a":{"constructor":{"prototype":{}}}}']))],
    ['truncated', () => { const s = json(base()); return s.slice(0, int(s.length)) }],
    ['bytes cut', () => { const b = Buffer.from(json(base())); return b.subarray(0, int(b.length)) }],
    ['invalid utf-8', () => { const b = Buffer.from(json(base())); const i = 2 + int(b.length - 4); b[i] = pick([0xff, 0xc0, 0xed, 0x80]); return b }],
    ['empty-ish', () => pick(['', ' ', 'null', '[]', '""', '0', 'true', '{}', '[{}]', '\n', '\u0000', '{"":""}'])],
    ['not an object', () => json(pick<unknown>([[base()], 'a string', 1250, [1, 2, 3]]))],
    ['missing field', () => { const b = base(); const required = ['urn', 'terminalId', 'systemTraceAuditNumber', 'cardNetwork', 'channel', 'transactionAmount', 'transactionReferenceNumber', 'last4Digits']; for (let i = 0; i <= int(3); i++) Reflect.deleteProperty(b, pick(required)); return json(b) }],
    ['random bytes', () => Buffer.from(Array.from({ length: int(300) }, () => int(256)))],
    ['many keys', () => { const b = base(); for (let i = 0; i < 200 + int(600); i++) b[`k${i}`] = i; return json(b) }]
  ]
  const contentTypes = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x', 'application/xml', 'application/json; charset=latin1', 'APPLICATION/JSON', '', 'application/jsonx', '*/*']
  const headerVariants: Array<[string, (h: Record<string, string | string[]>) => void]> = [
    ['right headers', () => {}],
    ['header missing', (h) => { Reflect.deleteProperty(h, pick(['x-consumer-custom-id', 'clientid', 'bankid'])) }],
    ['header duplicated', (h) => { const k = pick(['x-consumer-custom-id', 'clientid', 'bankid']); h[k] = [String(h[k]), String(h[k])] }],
    ['header duplicated, other value', (h) => { const k = pick(['x-consumer-custom-id', 'clientid', 'bankid']); h[k] = [String(h[k]), 'other'] }],
    ['huge header', (h) => { h[pick(['x-consumer-custom-id', 'clientid', 'bankid', 'x-extra', 'entityid'])] = 'h'.repeat(1000 + int(6000)) }],
    ['names in upper case', (h) => { for (const k of Object.keys(h)) { const v = h[k] as string; Reflect.deleteProperty(h, k); h[k.toUpperCase()] = v } }],
    ['values in other case', (h) => { const k = pick(['x-consumer-custom-id', 'clientid']); h[k] = String(h[k]).toUpperCase() }],
    ['entityId odd', (h) => { h.entityid = pick(['', ' ', '\u00e9', 'x'.repeat(5000), '0001']) }],
    ['content-type', (h) => { const ct = pick(contentTypes); if (ct === '') Reflect.deleteProperty(h, 'content-type'); else h['content-type'] = ct }]
  ]
  return () => {
    n++
    const [kind, make] = pick(bodies)
    const headers: Record<string, string | string[]> = { ...ok }
    // half the cases with the right headers, so most bodies reach validation
    const [hkind, vary] = r() < 0.5 ? headerVariants[0] as [string, (h: Record<string, string | string[]>) => void] : pick(headerVariants)
    vary(headers)
    return { kind: `#${n} ${kind} / ${hkind}`, payload: make(), headers }
  }
}

interface Outcome { status: number, contentType: string, text: string }

/** Returns what is wrong with an answer (empty when it is the contract's answer). */
function problems (o: Outcome): string[] {
  const out: string[] = []
  if (o.status >= 500) out.push(`HTTP ${o.status}`)
  if (![200, 400, 401, 403].includes(o.status)) out.push(`unexpected HTTP ${o.status}`)
  if (!/^application\/json/.test(o.contentType)) out.push(`content-type ${o.contentType}`)
  let a: Record<string, unknown>
  try {
    a = JSON.parse(o.text) as Record<string, unknown>
  } catch {
    return [...out, `not JSON: ${o.text.slice(0, 100)}`]
  }
  if (JSON.stringify(Object.keys(a).sort()) !== JSON.stringify(ANSWER_KEYS)) out.push(`keys ${Object.keys(a).join(',')}`)
  if (typeof a.responseCode !== 'string' || CODES[a.responseCode] === undefined) out.push(`responseCode ${String(a.responseCode)}`)
  else if (a.responseDescription !== CODES[a.responseCode]) out.push(`responseDescription ${String(a.responseDescription)}`)
  if (typeof a.responseDateTime !== 'string' || !/^[0-9]{14}$/.test(a.responseDateTime)) out.push('responseDateTime')
  if (typeof a.transactionAmount !== 'string' || !/^[0-9]{0,15}$/.test(a.transactionAmount)) out.push('transactionAmount')
  if (typeof a.currencyCode !== 'string' || !/^[0-9]{3}$/.test(a.currencyCode)) out.push('currencyCode')
  if (o.status !== 200 && a.responseCode !== '05') out.push(`HTTP ${o.status} with ${String(a.responseCode)}`)
  return out
}

/** The debit of an approved payload, read as the server reads it (JSON.parse: the last duplicate wins). */
function debitOfPayload (payload: string | Buffer): number {
  const b = JSON.parse(payload.toString()) as Record<string, unknown>
  const num = (v: unknown): number | undefined => (typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : undefined)
  return (num(b.billingAmount) ?? num(b.transactionAmount) ?? 0) + (num(b.fee) ?? 0)
}

async function setup (t: Pick<TAP, 'teardown'>): Promise<{ publicApp: FastifyInstance, adminApp: FastifyInstance, available: () => Promise<number> }> {
  // shedding off: a tight inject loop starves the event-loop sampler; this test is about input, not load
  const { publicApp, adminApp } = await build(t, { env: { SHED_EVENT_LOOP_DELAY_MS: '0' }, logLevel: 'warn' })
  const admin = async (method: 'PUT' | 'POST' | 'GET', url: string, body?: unknown): Promise<Record<string, unknown>> => {
    const res = await adminApp.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) })
    if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  await admin('PUT', `/admin/v1/customers/${URN}`, {})
  await admin('POST', `/admin/v1/customers/${URN}/credits`, { amount: String(OPENING), reference: 'opening' })
  return { publicApp, adminApp, available: async () => Number((await admin('GET', `/admin/v1/customers/${URN}`)).available) }
}

async function stillServes (t: Pick<TAP, 'equal'>, app: FastifyInstance): Promise<void> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: { 'content-type': 'application/json', 'x-consumer-custom-id': CONSUMER_KEY, clientid: CLIENT_ID, bankid: BANK_ID }, payload: JSON.stringify(authBody({ urn: URN })) })
  t.equal(res.json().responseCode, '00', 'a valid authorization is still approved afterwards')
}

t.test(`${CASES} hostile requests through inject (seed ${SEED})`, async (t) => {
  t.comment(`TEST_SEED=${SEED}`)
  const { publicApp, available } = await setup(t)
  const next = generator(SEED)
  const bad: string[] = []
  // a Map: one kind is called __proto__, and kinds[kind] would then be Object.prototype
  const kinds = new Map<string, Record<string, number>>()
  let approvedDebit = 0
  let approvals = 0
  for (let i = 0; i < CASES; i++) {
    const c = next()
    let o: Outcome
    try {
      const res = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: c.headers, payload: c.payload })
      o = { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: res.body }
    } catch (err) {
      bad.push(`${c.kind}: inject threw ${(err as Error).message}`)
      continue
    }
    const p = problems(o)
    if (p.length > 0) bad.push(`${c.kind}: ${p.join('; ')}; payload ${c.payload.toString().slice(0, 120)}`)
    const code = o.status === 200 ? (JSON.parse(o.text) as { responseCode: string }).responseCode : String(o.status)
    const kind = c.kind.replace(/^#\d+ /, '').replace(/ \/ .*$/, '')
    const k = kinds.get(kind) ?? {}
    kinds.set(kind, k)
    k[code] = (k[code] ?? 0) + 1
    if (o.status === 200 && code === '00') { approvals++; approvedDebit += debitOfPayload(c.payload) }
    // let timers (the deadline guard, the store) run now and then
    if (i % 200 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  t.same(bad.slice(0, 20), [], `every answer is the contract's answer, never a 5xx (seed ${SEED}; ${bad.length} bad)`)
  t.equal(await available(), OPENING - approvedDebit, `balance moved only by the ${approvals} approvals answered (seed ${SEED})`)
  t.comment(`answers by kind: ${JSON.stringify(Object.fromEntries(kinds))}`)
  await stillServes(t, publicApp)
})

t.test(`hostile requests over real HTTP (seed ${SEED})`, async (t) => {
  const { publicApp, available } = await setup(t)
  const { pool, url } = await listenApp(t, publicApp, 8)
  const port = Number(new URL(url).port)
  const next = generator(SEED + 1)
  const bad: string[] = []
  let approvedDebit = 0
  for (let i = 0; i < HTTP_CASES; i++) {
    const c = next()
    try {
      const res = await pool.request({ method: 'POST', path: '/api/v1/externalAuth', headers: c.headers, body: c.payload })
      const o = { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text: await res.body.text() }
      const p = problems(o)
      if (p.length > 0) bad.push(`${c.kind}: ${p.join('; ')}`)
      else if (o.status === 200 && (JSON.parse(o.text) as { responseCode: string }).responseCode === '00') approvedDebit += debitOfPayload(c.payload)
    } catch (err) {
      bad.push(`${c.kind}: ${(err as Error).message}`)
    }
  }
  t.same(bad.slice(0, 20), [], `every answer over HTTP is the contract's answer (seed ${SEED + 1}; ${bad.length} bad)`)
  t.equal(await available(), OPENING - approvedDebit, 'balance moved only by the approvals answered')

  // broken HTTP messages on a raw socket: Node's parser refuses them before any route runs; never a 5xx,
  // and the process lives on (their five-field answers: test/http/client-errors.test.ts)
  const raw = async (bytes: string): Promise<string> => await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    let got = ''
    s.setEncoding('latin1')
    s.on('data', (d: string) => { got += d })
    s.on('close', () => { resolve(got) })
    s.on('error', () => { resolve(got) })
    s.setTimeout(3000, () => { s.destroy() })
    s.write(bytes, 'latin1', () => { if (!bytes.includes('Content-Length: 100')) s.end() })
  })
  const h = `Host: x\r\nContent-Type: application/json\r\nX-Consumer-Custom-ID: ${CONSUMER_KEY}\r\nclientId: ${CLIENT_ID}\r\nbankId: ${BANK_ID}\r\n`
  const messages: Array<[string, string]> = [
    ['garbage request line', 'HELLO\r\n\r\n'],
    ['header without a colon', `POST /api/v1/externalAuth HTTP/1.1\r\n${h}broken header\r\n\r\n`],
    ['headers over 16 KiB', `POST /api/v1/externalAuth HTTP/1.1\r\n${h}X-Big: ${'b'.repeat(20_000)}\r\n\r\n`],
    ['bad chunked encoding', `POST /api/v1/externalAuth HTTP/1.1\r\n${h}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
    ['content-length and chunked', `POST /api/v1/externalAuth HTTP/1.1\r\n${h}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`],
    ['body shorter than its length, then close', `POST /api/v1/externalAuth HTTP/1.1\r\n${h}Content-Length: 100\r\n\r\n{"urn":`],
    ['NUL in the request line', 'POST /api/v1/ext\u0000Auth HTTP/1.1\r\nHost: x\r\n\r\n']
  ]
  for (const [label, bytes] of messages) {
    const answer = await raw(bytes)
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1]
    t.ok(status === undefined || Number(status) < 500, `${label}: ${status === undefined ? 'connection closed' : `HTTP ${status}`}, no 5xx`)
  }
  const health = await pool.request({ method: 'GET', path: '/health/live' })
  await health.body.dump()
  t.equal(health.statusCode, 200, 'the process lives on')
  await stillServes(t, publicApp)
})
