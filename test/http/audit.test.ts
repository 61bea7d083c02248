// The audit trail through the admin listener, on both stores: every call that changes something leaves one
// record (key id, route, target, before/after, time, request id) and its audit.recorded event; a read, a
// refusal by the store and an unknown key leave none; a call refused for a missing scope is recorded as
// refused; GET /admin/v1/audit reads them by time, key id and page. And no card data, OTP or key in any.
import t from 'tap'
import { build } from '../helpers/app.js'
import { keysFile, sha256Hex } from '../helpers/admin-keys.js'
import { authBody, platformHeaders } from '../helpers/config.js'
import { AUTH_PATH } from '../helpers/http-checks.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { startSims } from '../moves/sims.js'
import { buildAdminApp } from '../../src/app.js'
import { SCOPES } from '../../src/access/scopes.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import type { Relay } from '../../src/events/relay.js'
import type { AuditRecord } from '../../src/domain/audit.js'

const OPS = 'ops-key-7d1f3a9c5e2b4d6f8a0c'
const READER = 'reader-key-2b4d6f8a0c1e3g5i'
const CARD = { pan: '4111111111111111', expDate: '122030', cvd2: '739', nameOnCard: 'A CARDHOLDER', mobileNumber: '919800000001' }
const OTP = '864209'

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: every change audited once, through the admin listener`, async (t) => {
    const store: Store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const sims = await startSims(t, { gateway: { otpGenerator: () => OTP } })
    const file = keysFile(t, [{ id: 'ops-1', key: OPS, scopes: [...SCOPES] }, { id: 'reader-1', key: READER, scopes: ['read'] }])
    const { publicApp, adminApp, deps } = await build(t, { store, env: { ...sims.env, ADMIN_KEYS_FILE: file.path } })
    // the parked events need a relay: one that finds and delivers any id
    const relay = { parkedEvents: async () => [], resend: async () => ({ found: true, ok: true, detail: '' }) } as unknown as Relay
    const withRelay = await buildAdminApp({ ...deps, events: relay })
    t.teardown(async () => { await withRelay.close() })

    const urn = `UAUD${kind === 'memory' ? 'M' : 'R'}${process.pid}`.slice(0, 20)
    const mref = `MRAUD${process.pid}${kind}`
    const expected: Array<{ requestId: string, route: string, outcome: string, keyId: string, target: Record<string, string> }> = []
    const call = async (method: string, url: string, body: unknown, audited: { route: string, outcome?: string, target?: Record<string, string> } | null, key = OPS, app = adminApp): Promise<Record<string, unknown>> => {
      const res = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) })
      const requestId = String(res.headers['x-request-id'])
      t.match(requestId, /^[0-9a-f-]{36}$/, `${method} ${url}: the answer names its request id`)
      if (audited !== null) expected.push({ requestId, route: audited.route, outcome: audited.outcome ?? 'done', keyId: key === OPS ? 'ops-1' : 'reader-1', target: audited.target ?? { urn } })
      return res.json() as Record<string, unknown>
    }
    const A = '/admin/v1/customers'
    await call('PUT', `${A}/${urn}`, { customerId: 'C1' }, { route: `PUT ${A}/:urn` })
    await call('PUT', `${A}/${urn}/cards/4321`, { status: 'ACTIVE' }, { route: `PUT ${A}/:urn/cards/:last4`, target: { urn, last4: '4321' } })
    await call('POST', `${A}/${urn}/credits`, { amount: '10000', reference: 'cr-1' }, { route: `POST ${A}/:urn/credits`, target: { urn, reference: 'cr-1', amount: '10000' } })
    await call('POST', `${A}/${urn}/credits`, { amount: '10000', reference: 'cr-1' }, null)
    await call('POST', `${A}/${urn}/debits`, { amount: '100', reference: 'db-1' }, { route: `POST ${A}/:urn/debits`, target: { urn, reference: 'db-1', amount: '100' } })
    t.match(await call('POST', `${A}/${urn}/debits`, { amount: '99999999', reference: 'db-2' }, null), { error: 'INSUFFICIENT_FUNDS' })
    await call('PATCH', `${A}/${urn}/cards/4321/controls`, { ECOM: { dailyMax: 200000 } }, { route: `PATCH ${A}/:urn/cards/:last4/controls`, target: { urn, last4: '4321' } })
    const approved = await publicApp.inject({ method: 'POST', url: AUTH_PATH, headers: platformHeaders(), payload: authBody({ urn, last4Digits: '4321', transactionReferenceNumber: 'TRN-AUD-1', transactionAmount: '1000' }) })
    t.match(approved.json(), { responseCode: '00' })
    await call('POST', `${A}/${urn}/decisions/TRN-AUD-1/reversal`, { amount: '50' }, { route: `POST ${A}/:urn/decisions/:ref/reversal`, target: { urn, ref: 'TRN-AUD-1', amount: '50' } })
    await call('POST', '/admin/v1/rules/reload', undefined, { route: 'POST /admin/v1/rules/reload', target: {} })
    await call('POST', '/v1/loads', { urn, amount: '5000', merchantReferenceNo: mref, ...CARD }, { route: 'POST /v1/loads', outcome: 'OTP_SENT', target: { urn, merchantReferenceNo: mref, amount: '5000' } })
    await call('POST', `/v1/loads/${mref}/otp`, { otp: OTP }, { route: 'POST /v1/loads/:ref/otp', outcome: 'LOADED', target: { ref: mref } })
    t.match(await call('POST', '/v1/loads', { urn, amount: '5000', merchantReferenceNo: mref, ...CARD, cvd2: 'x' }, null), { error: 'VALIDATION' })
    await call('POST', '/admin/v1/events/failed/evt_3_1700000000000_0/resend', undefined, { route: 'POST /admin/v1/events/failed/:id/resend', outcome: 'delivered', target: { id: 'evt_3_1700000000000_0' } }, OPS, withRelay)
    await call('POST', `${A}/${urn}/credits`, { amount: '1', reference: 'cr-2' }, { route: `POST ${A}/:urn/credits`, outcome: 'refused' }, READER)
    await call('GET', `${A}/${urn}`, undefined, null, READER)
    await call('GET', `/v1/loads/${mref}`, undefined, null)

    const page = await adminApp.inject({ method: 'GET', url: '/admin/v1/audit?limit=100', headers: { authorization: `Bearer ${READER}` } })
    t.equal(page.statusCode, 200)
    const items = page.json().items as Array<AuditRecord & { at: string }>
    t.equal(page.json().nextCursor, null)
    t.equal(items.length, expected.length, 'one record per change, none for reads, replays, refusals by the store or bad input')
    for (const e of expected) {
      const rec = items.find((r) => r.requestId === e.requestId)
      t.match(rec, { route: e.route, outcome: e.outcome, keyId: e.keyId, target: e.target }, `${e.route}: ${e.outcome} by ${e.keyId}`)
      t.same(rec?.target, e.target, `${e.route}: its target, ids only`)
      t.equal(rec?.at, rec !== undefined ? new Date(rec.atMs).toISOString() : undefined, `${e.route}: its time, also in ISO 8601`)
    }
    const byRoute = (route: string): AuditRecord | undefined => items.find((r) => r.route === route && r.outcome === 'done')
    t.same([byRoute(`POST ${A}/:urn/credits`)?.before, byRoute(`POST ${A}/:urn/credits`)?.after], [{ available: '0' }, { available: '10000' }], 'a credit: the balance before and after')
    t.same([byRoute(`POST ${A}/:urn/decisions/:ref/reversal`)?.before, byRoute(`POST ${A}/:urn/decisions/:ref/reversal`)?.after], [{ held: '1000', available: '8900' }, { held: '950', released: '50', available: '8950' }], 'a reversal: the hold and balance before and after')
    t.same(byRoute(`PATCH ${A}/:urn/cards/:last4/controls`)?.after, { ECOM: { dailyMax: 200000 } }, 'controls: the card\'s own settings after, as GET …/controls shows them')
    t.match(byRoute('POST /admin/v1/rules/reload'), { before: { version: /./ }, after: { version: /./, rules: 0 } }, 'a reload: the versions before and after')
    t.ok(items.every((r, i) => i === 0 || (items[i - 1] as AuditRecord).atMs >= r.atMs), 'newest first')

    const mine = await adminApp.inject({ method: 'GET', url: '/admin/v1/audit?keyId=reader-1', headers: { authorization: `Bearer ${OPS}` } })
    t.match(mine.json(), { items: [{ keyId: 'reader-1', outcome: 'refused', scope: 'money:write' }], nextCursor: null }, 'by key id')
    const first = items.at(-1) as AuditRecord
    const window = await adminApp.inject({ method: 'GET', url: `/admin/v1/audit?from=${new Date(first.atMs).toISOString()}&to=${new Date(first.atMs + 1).toISOString()}`, headers: { authorization: `Bearer ${OPS}` } })
    t.ok((window.json().items as AuditRecord[]).some((r) => r.id === first.id) && (window.json().items as AuditRecord[]).every((r) => r.atMs === first.atMs), 'from and to: ISO 8601, [from, to)')
    const ids: string[] = []
    let cursor: string | null = null
    do {
      const res = await adminApp.inject({ method: 'GET', url: `/admin/v1/audit?limit=4${cursor !== null ? `&cursor=${cursor}` : ''}`, headers: { authorization: `Bearer ${OPS}` } })
      ids.push(...(res.json().items as AuditRecord[]).map((r) => r.id))
      cursor = res.json().nextCursor as string | null
    } while (cursor !== null && ids.length < 100)
    t.same(ids, items.map((r) => r.id), 'pages of 4: every record once, in order')
    t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/audit?from=yesterday', headers: { authorization: `Bearer ${OPS}` } })).statusCode, 400)
    t.equal((await adminApp.inject({ method: 'GET', url: '/admin/v1/audit?cursor=zzz', headers: { authorization: `Bearer ${OPS}` } })).statusCode, 400)

    const events = (await store.readDecisionStream(urn)).filter((e) => e.type === 'audit.recorded')
    t.ok(events.length >= expected.filter((e) => e.target.urn === urn).length, `the customer's records are in its outbox as events (${events.length})`)
    const text = JSON.stringify(items) + JSON.stringify(events)
    for (const secret of [CARD.pan, CARD.pan.slice(0, 12), `"${CARD.cvd2}"`, CARD.expDate, OTP, OPS, READER, sha256Hex(OPS), sha256Hex(READER)]) {
      t.notOk(text.includes(secret), `no ${secret.slice(0, 6)}… in the audit trail or its events`)
    }
  })
}
