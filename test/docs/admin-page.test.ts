// docs/api/admin.md's decision example is a real answer: the request it shows, sent to extauth with the rule it
// names, gives exactly that entry from every admin call that reads a decision (by reference, by customer and
// reference, the search); only the instants and the rule set's version differ from run to run.
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helpers/app.js'
import { adminHeaders, platformHeaders } from '../helpers/config.js'
import { codeBlocks, readPage } from './page.js'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

t.test('the journal entry on the admin page is what the admin calls answer', async (t) => {
  const block = codeBlocks(readPage('docs/api/admin.md')).find((b) => b.lang === 'json' && b.heading === 'Finding a decision')
  t.ok(block, 'the page shows a decision')
  const shown = JSON.parse(block?.body ?? '{}') as Record<string, unknown> & { urn: string, last4: string, reference: string, request: Record<string, string>, limit: { usedBefore: number, max: number, ruleId: string } }

  // the rule the example names, with the max it shows
  const dir = await mkdtemp(join(tmpdir(), 'extauth-admin-page-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await writeFile(join(dir, 'limits.json'), JSON.stringify({
    rules: [{ id: shown.limit.ruleId, when: { channel: { eq: shown.request.channel } }, limit: { measure: 'amount', per: 'urn', window: 'day', max: shown.limit.max }, then: { decline: shown.code } }]
  }))
  const { publicApp, adminApp } = await build(t, { env: { RULES_DIR: dir } })
  const admin = async (method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown): Promise<{ status: number, body: Record<string, unknown> }> => {
    const res = await adminApp.inject({ method, url, headers: adminHeaders, ...(payload !== undefined ? { payload: payload as object } : {}) })
    return { status: res.statusCode, body: res.json() }
  }
  const { urn, last4, reference } = shown
  t.equal((await admin('PUT', `/admin/v1/customers/${urn}`, {})).status, 200)
  t.equal((await admin('PUT', `/admin/v1/customers/${urn}/cards/${last4}`, { status: 'ACTIVE' })).status, 200)
  t.equal((await admin('POST', `/admin/v1/customers/${urn}/credits`, { amount: '1000000', reference: 'seed' })).status, 200)
  // the day's use the example saw, then the example's own request
  const before = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: { ...shown.request, transactionReferenceNumber: `${reference}-before`, transactionAmount: String(shown.limit.usedBefore) } })
  t.equal(before.json().responseCode, '00', 'the use before it approved')
  const res = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: shown.request })
  t.equal(res.statusCode, 200, `the page's request is one extauth takes: ${res.body}`)
  t.equal(res.json().responseCode, shown.code, 'and it is declined as the page says')

  const byRef = await admin('GET', `/admin/v1/decisions/${reference}`)
  const byCustomer = await admin('GET', `/admin/v1/customers/${urn}/decisions/${reference}`)
  const searched = await admin('GET', `/admin/v1/decisions?urn=${urn}&code=${String(shown.code)}`)
  const entries = { 'by reference': (byRef.body.items as unknown[])[0], 'by customer and reference': byCustomer.body, search: (searched.body.items as unknown[])[0] }
  for (const [how, entry] of Object.entries(entries)) {
    const e = entry as Record<string, unknown>
    t.match(e, { arrivedAt: ISO, decidedAt: ISO, rulesVersion: /^.+$/ }, `${how}: instants and version`)
    t.same({ ...e, arrivedAt: shown.arrivedAt, decidedAt: shown.decidedAt, rulesVersion: shown.rulesVersion }, shown, `${how}: the page's entry`)
    const stored = ['attempt', 'fingerprint', 'limitEntries', 'controlEntries', 'controlsSeen', 'limitSeen', 'meta', 'held', 'shadowLimitHits']
    t.same(Object.keys(e).filter((k) => stored.includes(k)), [], `${how}: none of the store's own fields`)
    t.notMatch(JSON.stringify(e), /\{[^"{}]*\}:/, `${how}: no store key`)
  }
})
