// Admin answers give instants in ISO 8601 beside their epoch-ms fields (decision records, reversals).
import t from 'tap'
import { withIsoTimes } from '../../src/http/iso-times.js'
import { adminClient, auth, authBody, buildApp, checkInjected, freshUrn } from '../helpers/http-checks.js'
import { MemoryStore } from '../../src/store/memory.js'

t.test('…AtMs and atMs numbers get an ISO sibling; nothing else changes', async t => {
  const at = Date.UTC(2026, 10, 21, 9, 30, 15, 123)
  const input = Object.freeze({
    decidedAtMs: at,
    reversal: Object.freeze({ amount: '10', atMs: at + 1000 }),
    list: Object.freeze([Object.freeze({ createdAtMs: at })]),
    latencyMs: 135,
    deadlineAtMs: 1200,
    expiresAtMs: null,
    loadedAt: '2026-01-01T00:00:00.000Z',
    loadedAtMs: at
  })
  t.same(withIsoTimes(input), {
    ...input,
    decidedAt: '2026-11-21T09:30:15.123Z',
    reversal: { amount: '10', atMs: at + 1000, at: '2026-11-21T09:30:16.123Z' },
    list: [{ createdAtMs: at, createdAt: '2026-11-21T09:30:15.123Z' }]
  }, 'a duration, a small number, null and an existing ISO field are left alone')
  const plain = { a: 1, b: [{ c: 'x' }] }
  t.equal(withIsoTimes(plain), plain, 'nothing to add: the same object')
})

t.test('a decision from the admin API has ISO times', async t => {
  const { publicApp, adminApp } = await buildApp(t, { store: new MemoryStore() })
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 10_000)
  const body = authBody({ urn, transactionAmount: '1250' })
  checkInjected(t, await auth(publicApp, body), { status: 200, code: '00', amount: '1250' })
  const ref = body.transactionReferenceNumber as string
  t.equal((await a.call('POST', `/admin/v1/customers/${urn}/decisions/${ref}/reversal`, {})).statusCode, 200)
  const rec = (await a.call('GET', `/admin/v1/customers/${urn}/decisions/${ref}`)).json() as Record<string, unknown>
  for (const k of ['arrivedAt', 'decidedAt', 'reversedAt']) t.match(rec[k], /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, `${k}: ISO 8601`)
  t.ok(Date.parse(rec.arrivedAt as string) <= Date.parse(rec.reversedAt as string), 'reversed after it arrived')
  t.notOk(Object.keys(rec).some((k) => k.endsWith('AtMs')), 'one shape: the journal entry, its instants in ISO 8601 only')
})
