// Secrets never leave: the public route, every admin route and the card-lifecycle routes are driven with
// recognisable secret values (the consumer key, the admin token and the keys of ADMIN_KEYS_FILE, the
// upstream credentials, and PAN, CVD2, expiry and OTP values both where a route takes them and in extra
// fields, headers and query strings) and none of them may reach the log stream (at level trace), the store
// (every key and value under the test's Redis prefix: the audit trail and the events included), the metrics
// text, or any answer (the audit trail's included).
//
// The calls are a list: a new route is covered by adding its calls to CALLS.
import t from 'tap'
import { Redis } from 'ioredis'
import { build } from '../helpers/app.js'
import { BANK_ID, CLIENT_ID, authBody } from '../helpers/config.js'
import { sharedRedisStore, SHARED_REDIS_URL } from '../helpers/redis.js'
import { startSims, GATEWAY, PREPAID, RISK } from '../moves/sims.js'
import { keysFile } from '../helpers/admin-keys.js'
import { SCOPES } from '../../src/access/scopes.js'

const SECRET = {
  consumerKey: 'ck-SECRET-c0nsumer-7f3a9c',
  adminToken: 'adm-SECRET-t0ken-51be02',
  pan: '5555444433331111',
  panHead: '555544443333',
  cvd2: '7391',
  expDate: '112031',
  otp: '918273',
  password: 'pw-SECRET-hunter2-x9',
  fileKey: 'fk-SECRET-k3y-9e07d1',
  readKey: 'rk-SECRET-k3y-4c2a88'
}
const UPSTREAM = [GATEWAY.apiKey, PREPAID.apiKey, PREPAID.consumerKey, PREPAID.secureCode, RISK.accessToken]

/** Each secret and the patterns that would show it: long values as they are, short numeric ones as a token. */
function leaks (text: string): string[] {
  const found: string[] = []
  for (const s of [SECRET.consumerKey, SECRET.adminToken, SECRET.fileKey, SECRET.readKey, SECRET.pan, SECRET.panHead, SECRET.password, ...UPSTREAM]) {
    if (text.includes(s)) found.push(s)
  }
  // 4-6 digits also occur by chance inside ids and timestamps; a leak shows them as a value of their own
  for (const s of [SECRET.cvd2, SECRET.expDate, SECRET.otp]) {
    if (new RegExp(`["'=:\\s]${s}(?![0-9A-Za-z-])|(cvd2|otp|expDate|cvv)\\W{0,6}${s}`, 'i').test(text)) found.push(s)
  }
  return found
}

/** Extra body fields and headers that carry secrets where no route expects them. */
const EXTRA_FIELDS = { pan: SECRET.pan, cardNumber: SECRET.pan, cvd2: SECRET.cvd2, cvv: SECRET.cvd2, expDate: SECRET.expDate, otp: SECRET.otp, password: SECRET.password, note: `card ${SECRET.pan} exp ${SECRET.expDate}` }
const EXTRA_HEADERS = { 'x-card-pan': SECRET.pan, 'x-cvd2': SECRET.cvd2, 'x-otp': SECRET.otp, 'x-password': SECRET.password, 'x-api-key': GATEWAY.apiKey, cookie: `session=${SECRET.password}` }
const QUERY = `?pan=${SECRET.pan}&cvd2=${SECRET.cvd2}&otp=${SECRET.otp}&token=${SECRET.adminToken}`

interface Call {
  listener: 'public' | 'admin'
  method: 'GET' | 'PUT' | 'POST' | 'PATCH'
  url: string
  headers?: Record<string, string>
  /** an object is sent as JSON; a string as it is */
  body?: unknown
}

const URN = 'USECRET1'
const URN2 = 'USECRET2'
const MREF = `MRSEC${process.pid}`
const platform = { 'content-type': 'application/json', 'x-consumer-custom-id': SECRET.consumerKey, clientid: CLIENT_ID, bankid: BANK_ID }
const admin = { 'content-type': 'application/json', authorization: `Bearer ${SECRET.adminToken}` }
const json = (o: unknown): string => JSON.stringify(o)

const card = (): Record<string, string> => ({ pan: SECRET.pan, expDate: SECRET.expDate, cvd2: SECRET.cvd2, nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001' })

/** Every call of every route, with the secrets where they belong and where they do not. */
function calls (): Call[] {
  const out: Call[] = []
  // each admin call: as it should be (with secret headers and a secret query), with secret extra fields,
  // with a JSON body cut short after a secret, and with the right token in the wrong place
  const adminCall = (method: Call['method'], url: string, body?: Record<string, unknown>): void => {
    out.push({ listener: 'admin', method, url: url + QUERY, headers: { ...admin, ...EXTRA_HEADERS }, ...(body !== undefined ? { body } : {}) })
    if (method !== 'GET') {
      out.push({ listener: 'admin', method, url, headers: admin, body: { ...(body ?? {}), ...EXTRA_FIELDS } })
      out.push({ listener: 'admin', method, url, headers: admin, body: json({ ...(body ?? {}), ...EXTRA_FIELDS }).slice(0, -3) })
    }
    out.push({ listener: 'admin', method, url, headers: { authorization: `Bearer ${SECRET.adminToken}x`, 'x-admin-token': SECRET.adminToken } })
  }
  adminCall('PUT', `/admin/v1/customers/${URN}`, { customerId: 'C1' })
  adminCall('PUT', `/admin/v1/customers/${URN}/cards/1111`, { status: 'ACTIVE' })
  adminCall('POST', `/admin/v1/customers/${URN}/credits`, { amount: '100000', reference: 'cr-1' })
  adminCall('POST', `/admin/v1/customers/${URN}/debits`, { amount: '100', reference: 'db-1' })
  adminCall('GET', `/admin/v1/customers/${URN}`)

  // the public route: secret extra fields and headers, a body cut after a secret, a wrong key near the real one
  const approved = authBody({ urn: URN, last4Digits: '1111', transactionReferenceNumber: 'REF-SECRET-1', ...EXTRA_FIELDS })
  out.push({ listener: 'public', method: 'POST', url: '/api/v1/externalAuth', headers: { ...platform, ...EXTRA_HEADERS }, body: approved })
  out.push({ listener: 'public', method: 'POST', url: '/api/v1/externalAuth' + QUERY, headers: platform, body: authBody({ urn: URN, last4Digits: '1111', ...EXTRA_FIELDS }) })
  out.push({ listener: 'public', method: 'POST', url: '/api/v1/externalAuth', headers: platform, body: json(authBody({ urn: URN, ...EXTRA_FIELDS })).slice(0, -3) })
  out.push({ listener: 'public', method: 'POST', url: '/api/v1/externalAuth', headers: platform, body: authBody({ urn: URN, transactionAmount: SECRET.pan, merchantName: SECRET.password, ...EXTRA_FIELDS }) })
  out.push({ listener: 'public', method: 'POST', url: '/api/v1/externalAuth', headers: { ...platform, 'x-consumer-custom-id': SECRET.consumerKey + 'x' }, body: authBody({ urn: URN }) })
  out.push({ listener: 'public', method: 'POST', url: '/api/v1/externalAuth', headers: { ...platform, clientid: SECRET.consumerKey }, body: authBody({ urn: URN }) })
  out.push({ listener: 'public', method: 'GET', url: '/health/ready' + QUERY, headers: { ...EXTRA_HEADERS, authorization: `Bearer ${SECRET.adminToken}` } })
  out.push({ listener: 'public', method: 'GET', url: `/admin/v1/customers/${URN}`, headers: admin })

  adminCall('GET', `/admin/v1/customers/${URN}/decisions/REF-SECRET-1`)
  adminCall('POST', `/admin/v1/customers/${URN}/decisions/REF-SECRET-1/reversal`, { amount: '10' })
  adminCall('GET', '/admin/v1/rules')
  adminCall('POST', '/admin/v1/rules/reload', {})
  adminCall('PATCH', `/admin/v1/customers/${URN}/cards/1111/controls`, { ECOM: { enabled: true } })
  adminCall('POST', '/admin/v1/events/failed/evt_1_2_3/resend', {})
  // the keys of ADMIN_KEYS_FILE: one with every scope, one that may only read (refused and audited)
  const fileKey = { ...admin, authorization: `Bearer ${SECRET.fileKey}` }
  const readKey = { ...admin, authorization: `Bearer ${SECRET.readKey}` }
  out.push({ listener: 'admin', method: 'POST', url: `/admin/v1/customers/${URN}/credits` + QUERY, headers: { ...fileKey, ...EXTRA_HEADERS }, body: { amount: '10', reference: 'cr-file' } })
  out.push({ listener: 'admin', method: 'POST', url: `/admin/v1/customers/${URN}/debits`, headers: readKey, body: { amount: '10', reference: 'db-read', ...EXTRA_FIELDS } })
  out.push({ listener: 'admin', method: 'POST', url: '/v1/loads', headers: readKey, body: { urn: URN, amount: '5000', merchantReferenceNo: `${MREF}r`, ...card() } })
  out.push({ listener: 'admin', method: 'GET', url: `/admin/v1/customers/${URN}`, headers: { authorization: `Bearer ${SECRET.fileKey}x`, 'x-admin-key': SECRET.readKey } })
  out.push({ listener: 'admin', method: 'GET', url: '/metrics' + QUERY, headers: EXTRA_HEADERS })

  // the card-lifecycle API (README "Card lifecycle API"): the card data is expected here, and must still not stay
  const cardData = card()
  out.push({ listener: 'admin', method: 'POST', url: '/v1/loads', headers: { ...admin, ...EXTRA_HEADERS }, body: { urn: URN, amount: '5000', merchantReferenceNo: MREF, ...cardData } })
  out.push({ listener: 'admin', method: 'POST', url: '/v1/loads', headers: admin, body: { urn: URN, amount: '5000', merchantReferenceNo: MREF, ...cardData } })
  out.push({ listener: 'admin', method: 'POST', url: '/v1/loads', headers: admin, body: { urn: URN, amount: '5000', merchantReferenceNo: MREF, ...cardData, cvd2: '12', pan: SECRET.pan + 'x' } })
  out.push({ listener: 'admin', method: 'POST', url: '/v1/loads', headers: admin, body: json({ urn: URN, amount: '5000', merchantReferenceNo: `${MREF}b`, ...cardData }).slice(0, -30) })
  out.push({ listener: 'admin', method: 'POST', url: `/v1/loads/${MREF}/otp/resend`, headers: admin, body: {} })
  out.push({ listener: 'admin', method: 'POST', url: `/v1/loads/${MREF}/otp`, headers: admin, body: { otp: '000000' } })
  out.push({ listener: 'admin', method: 'POST', url: `/v1/loads/${MREF}/otp`, headers: admin, body: { ...EXTRA_FIELDS, otp: SECRET.otp } })
  out.push({ listener: 'admin', method: 'POST', url: `/v1/loads/${MREF}/otp`, headers: admin, body: { otp: SECRET.otp } })
  out.push({ listener: 'admin', method: 'GET', url: `/v1/loads/${MREF}` + QUERY, headers: admin })
  for (const action of ['capture', 'cancel']) {
    out.push({ listener: 'admin', method: 'POST', url: `/v1/preauths/1234/${action}`, headers: { ...admin, ...EXTRA_HEADERS }, body: { merchantReferenceNo: MREF, ...EXTRA_FIELDS } })
    out.push({ listener: 'admin', method: 'POST', url: `/v1/preauths/1234/${action}`, headers: admin, body: { merchantReferenceNo: MREF } })
  }
  const transfer = { clientTxnId: `TX${process.pid}`, fromUrn: URN, toUrn: URN2, fromAccountNumber: SECRET.pan, toAccountNumber: '1000000002', amount: '100' }
  out.push({ listener: 'admin', method: 'POST', url: '/v1/transfers', headers: { ...admin, ...EXTRA_HEADERS }, body: { ...transfer, ...EXTRA_FIELDS } })
  out.push({ listener: 'admin', method: 'POST', url: '/v1/transfers', headers: admin, body: transfer })
  out.push({ listener: 'admin', method: 'GET', url: `/v1/transfers/TX${process.pid}`, headers: admin })
  const analyse = { clientTxnRefId: `RK${process.pid}`, acctNumber: '1000000001', purchaseAmount: '100', txnSourceType: 'ECOM' }
  // with the extra fields: refused (400) like every admin body with an unknown field; without: sent
  out.push({ listener: 'admin', method: 'POST', url: '/v1/risk/analyse', headers: { ...admin, ...EXTRA_HEADERS }, body: { ...analyse, ...EXTRA_FIELDS } })
  out.push({ listener: 'admin', method: 'POST', url: '/v1/risk/analyse', headers: { ...admin, ...EXTRA_HEADERS }, body: analyse })
  // last: the audit trail of all the above, read with each key
  out.push({ listener: 'admin', method: 'GET', url: '/admin/v1/audit?limit=100', headers: readKey })
  out.push({ listener: 'admin', method: 'GET', url: '/admin/v1/audit?limit=100' + QUERY.replace('?', '&'), headers: { ...admin, ...EXTRA_HEADERS } })
  return out
}

async function scanStore (url: string, prefix: string): Promise<string> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 })
  const parts: string[] = []
  try {
    let cursor = '0'
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = next
      for (const key of keys) {
        parts.push(key)
        const type = await r.type(key)
        if (type === 'string') parts.push(String(await r.get(key)))
        else if (type === 'hash') parts.push(JSON.stringify(await r.hgetall(key)))
        else if (type === 'zset') parts.push(JSON.stringify(await r.zrange(key, 0, -1, 'WITHSCORES')))
        else if (type === 'set') parts.push(JSON.stringify(await r.smembers(key)))
        else if (type === 'list') parts.push(JSON.stringify(await r.lrange(key, 0, -1)))
        else if (type === 'stream') parts.push(JSON.stringify(await r.xrange(key, '-', '+')))
        else parts.push(`<${type}>`)
      }
    } while (cursor !== '0')
  } finally {
    r.disconnect()
  }
  return parts.join('\n')
}

t.test('the leak detector sees each secret as it would appear', async (t) => {
  t.same(leaks(`{"a":"${SECRET.pan}"}`), [SECRET.pan, SECRET.panHead])
  t.same(leaks(`{"a":"${SECRET.panHead}xxxx"}`), [SECRET.panHead], 'a PAN with its last four cut')
  t.same(leaks(`x-consumer-custom-id: ${SECRET.consumerKey}`), [SECRET.consumerKey])
  t.same(leaks(`{"cvd2":"${SECRET.cvd2}"}`), [SECRET.cvd2])
  t.same(leaks(`otp=${SECRET.otp}&x=1`), [SECRET.otp])
  t.same(leaks(`{"expDate":${SECRET.expDate}}`), [SECRET.expDate])
  t.same(leaks(`{"time":17${SECRET.otp}123,"id":"ab${SECRET.cvd2}cd-0"}`), [], 'not inside other numbers or ids')
})

t.test('no secret reaches the logs, the store, the metrics or an answer', async (t) => {
  const sims = await startSims(t, { gateway: { otpGenerator: () => SECRET.otp } })
  const store = await sharedRedisStore(t)
  const prefix = (store as unknown as { keys: { prefix: string } }).keys.prefix
  const keys = keysFile(t, [{ id: 'file-all', key: SECRET.fileKey, scopes: [...SCOPES] }, { id: 'file-read', key: SECRET.readKey, scopes: ['read'] }])
  const { publicApp, adminApp, rawLogs } = await build(t, {
    store,
    logLevel: 'trace',
    env: { ...sims.env, EXTAUTH_CONSUMER_KEY: SECRET.consumerKey, ADMIN_TOKEN: SECRET.adminToken, ADMIN_KEYS_FILE: keys.path, SHED_EVENT_LOOP_DELAY_MS: '0' }
  })
  await store.putCustomer(URN2, {})

  const answers: string[] = []
  const statuses: string[] = []
  for (const c of calls()) {
    const app = c.listener === 'public' ? publicApp : adminApp
    const res = await app.inject({
      method: c.method,
      url: c.url,
      headers: c.headers ?? {},
      ...(c.body !== undefined ? { payload: typeof c.body === 'string' ? c.body : json(c.body) } : {})
    })
    statuses.push(`${c.listener} ${c.method} ${c.url.replace(/\?.*$/, '')}: ${res.statusCode}`)
    t.ok(res.statusCode < 500 || res.statusCode === 502 || res.statusCode === 503, `${c.method} ${c.url.replace(/\?.*$/, '')}: no internal error (${res.statusCode})`)
    const found = leaks(res.body)
    if (found.length > 0) t.fail(`the answer of ${c.listener} ${c.method} ${c.url.replace(/\?.*$/, '')} (${res.statusCode}) shows ${found.join(', ')}: ${res.body.slice(0, 300)}`)
    answers.push(res.body)
  }
  t.comment(statuses.join('\n'))
  t.ok(statuses.some((s) => s.startsWith('admin POST /v1/loads/') && s.endsWith(': 200')), 'the load flow ran (its routes answered 200)')
  t.ok(rawLogs.length > 0, `the log stream was captured at trace (${rawLogs.length} lines)`)

  const logLeaks = rawLogs.filter((l) => leaks(l).length > 0)
  t.same(logLeaks.slice(0, 5), [], 'no secret in the log stream')
  const stored = await scanStore(SHARED_REDIS_URL, prefix)
  t.ok(stored.length > 0, 'the store holds what the calls left')
  t.same(leaks(stored), [], 'no secret in the store (keys and values under the prefix)')
  // the sweep covered the audit trail: its records and events hold what the calls did, by key id
  const trail = (JSON.parse(answers.at(-2) ?? '{}') as { items?: Array<Record<string, unknown>> }).items ?? []
  t.ok(trail.some((r) => r.keyId === 'file-all' && r.route === 'POST /admin/v1/customers/:urn/credits' && r.outcome === 'done'), 'the audit trail was read: a credit by the file key')
  t.ok(trail.some((r) => r.keyId === 'file-read' && r.route === 'POST /admin/v1/customers/:urn/debits' && r.outcome === 'refused'), 'and the read key\'s refusals')
  t.ok(trail.some((r) => r.route === 'POST /v1/loads' && r.outcome === 'OTP_SENT'), 'and the card-lifecycle calls')
  t.match(stored, /audit\.recorded/, 'the store holds the audit events')
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.same(leaks(metrics), [], 'no secret in the metrics')
  // the risk service is sent the fields it takes, not whatever else a caller put in the body
  t.ok(sims.risk.received.length > 0, 'the risk service was called')
  t.same(leaks(JSON.stringify(sims.risk.received)), [], 'no card data forwarded to the risk service')
})
