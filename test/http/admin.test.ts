// The admin listener (README "Admin API"): bearer token on every route but /metrics, customers and cards,
// idempotent credits and debits, decisions and reversals, the rule set and its reload. The money-moving
// routes run on the memory store and on a real Redis.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type TAP } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { ADMIN_TOKEN, adminHeaders } from '../helpers/config.js'
import { STORE_KINDS, adminClient, auth, authBody, buildApp, checkInjected, freshUrn, metricValue, rulesDir } from '../helpers/http-checks.js'

type Method = 'GET' | 'PUT' | 'POST'

const ROUTES: Array<[Method, string, unknown]> = [
  ['PUT', '/admin/v1/customers/URN1', {}],
  ['PUT', '/admin/v1/customers/URN1/cards/1234', { status: 'ACTIVE' }],
  ['POST', '/admin/v1/customers/URN1/credits', { amount: '100', reference: 'r1' }],
  ['POST', '/admin/v1/customers/URN1/debits', { amount: '100', reference: 'r1' }],
  ['GET', '/admin/v1/customers/URN1', undefined],
  ['GET', '/admin/v1/customers/URN1/decisions/REF1', undefined],
  ['POST', '/admin/v1/customers/URN1/decisions/REF1/reversal', {}],
  ['GET', '/admin/v1/rules', undefined],
  ['POST', '/admin/v1/rules/reload', undefined],
  ['GET', '/admin/v1/no-such-route', undefined]
]

function errorBody (t: Pick<TAP, 'equal' | 'match'>, res: LightMyRequestResponse, status: number, error: unknown, label: string): void {
  t.equal(res.statusCode, status, `${label}: HTTP ${status}`)
  t.match(String(res.headers['content-type']), /^application\/json/, `${label}: JSON`)
  const body = res.json() as Record<string, unknown>
  t.match(body, { error, message: String }, `${label}: {error, message}`)
}

t.test('every admin route needs the bearer token', async t => {
  const { adminApp } = await buildApp(t)
  const bad: Array<[string, Record<string, string>]> = [
    ['no Authorization', { 'content-type': 'application/json' }],
    ['wrong token', { 'content-type': 'application/json', authorization: 'Bearer not-the-token' }],
    ['token with a suffix', { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}x` }],
    ['token without the scheme', { 'content-type': 'application/json', authorization: ADMIN_TOKEN }],
    ['Basic scheme', { 'content-type': 'application/json', authorization: `Basic ${ADMIN_TOKEN}` }],
    ['empty bearer', { 'content-type': 'application/json', authorization: 'Bearer ' }]
  ]
  for (const [method, url, payload] of ROUTES) {
    for (const [label, headers] of bad) {
      const res = await adminApp.inject({ method, url, headers, ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}) })
      errorBody(t, res, 401, 'UNAUTHORIZED', `${method} ${url}, ${label}`)
    }
  }
  const a = adminClient(adminApp)
  t.equal((await a.call('GET', '/admin/v1/customers/URN1')).statusCode, 404, 'the refused PUT created nothing')
  errorBody(t, await a.call('GET', '/admin/v1/no-such-route'), 404, 'NOT_FOUND', 'unknown admin route with the token')
})

t.test('/metrics needs no token and counts decisions', async t => {
  const { publicApp, adminApp } = await buildApp(t)
  checkInjected(t, await auth(publicApp, authBody({ urn: freshUrn() })), { status: 200, code: '14', amount: '1250' })
  const res = await adminApp.inject({ method: 'GET', url: '/metrics' })
  t.equal(res.statusCode, 200)
  t.match(String(res.headers['content-type']), /^text\/plain/)
  t.match(res.body, /# TYPE extauth_decisions_total counter/)
  t.equal(metricValue(res.body, 'extauth_decisions_total{code="14",reason="unknown_urn"}'), 1, 'the decision is counted')
  const withToken = await adminApp.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer whatever' } })
  t.equal(withToken.statusCode, 200, 'any Authorization header is ignored there')
})

t.test('customers and cards', async t => {
  const { adminApp } = await buildApp(t)
  const a = adminClient(adminApp)
  const urn = freshUrn()

  let res = await a.call('PUT', `/admin/v1/customers/${urn}`, {})
  t.equal(res.statusCode, 200)
  t.same(res.json(), { urn, customerId: null, status: 'ACTIVE', available: '0', held: '0', ledger: '0', cards: {} }, 'created ACTIVE with nothing')
  res = await a.call('PUT', `/admin/v1/customers/${urn}`, { customerId: 'CUST-9' })
  t.match(res.json(), { customerId: 'CUST-9', status: 'ACTIVE' }, 'customerId set, status kept')
  res = await a.call('PUT', `/admin/v1/customers/${urn}`, { status: 'BLOCKED' })
  t.match(res.json(), { customerId: 'CUST-9', status: 'BLOCKED' }, 'status set, customerId kept')
  res = await a.call('PUT', `/admin/v1/customers/${urn}`, { status: 'CLOSED', customerId: 'CUST-10' })
  t.match(res.json(), { customerId: 'CUST-10', status: 'CLOSED' }, 'both at once')
  res = await a.call('PUT', `/admin/v1/customers/${urn}`, { status: 'ACTIVE' })
  t.match(res.json(), { status: 'ACTIVE' }, 'back to ACTIVE')

  for (const [label, body] of [
    ['status not one of the three', { status: 'FROZEN' }],
    ['status lower case', { status: 'blocked' }],
    ['customerId of 51 characters', { customerId: 'C'.repeat(51) }]
  ] as Array<[string, unknown]>) {
    errorBody(t, await a.call('PUT', `/admin/v1/customers/${urn}`, body), 400, String, label)
  }
  errorBody(t, await a.call('PUT', `/admin/v1/customers/${'U'.repeat(21)}`, {}), 400, String, 'urn of 21 characters')
  t.match(await a.customer(urn), { customerId: 'CUST-10', status: 'ACTIVE' }, 'refused updates changed nothing')

  errorBody(t, await a.call('PUT', `/admin/v1/customers/${freshUrn()}/cards/1234`, { status: 'ACTIVE' }), 404, 'CUSTOMER_NOT_FOUND', 'card of an unknown customer')
  for (const [label, last4, body] of [
    ['last4 of 3 digits', '123', { status: 'ACTIVE' }],
    ['last4 of 5 digits', '12345', { status: 'ACTIVE' }],
    ['last4 not digits', '12ab', { status: 'ACTIVE' }],
    ['card status unknown', '1234', { status: 'FROZEN' }],
    ['card status missing', '1234', {}]
  ] as Array<[string, string, unknown]>) {
    errorBody(t, await a.call('PUT', `/admin/v1/customers/${urn}/cards/${last4}`, body), 400, String, label)
  }
  t.same((await a.customer(urn)).cards, {}, 'refused cards registered nothing')

  t.same((await a.card(urn, '1234', 'ACTIVE')).cards, { 1234: 'ACTIVE' })
  t.same((await a.card(urn, '5678', 'LOST')).cards, { 1234: 'ACTIVE', 5678: 'LOST' })
  t.same((await a.card(urn, '1234', 'STOLEN')).cards, { 1234: 'STOLEN', 5678: 'LOST' }, 'a card updated')
  t.same((await a.card(urn, '5678', 'BLOCKED')).cards, { 1234: 'STOLEN', 5678: 'BLOCKED' })

  res = await a.call('GET', `/admin/v1/customers/${urn}`)
  t.same(res.json(), { urn, customerId: 'CUST-10', status: 'ACTIVE', available: '0', held: '0', ledger: '0', cards: { 1234: 'STOLEN', 5678: 'BLOCKED' } })
  errorBody(t, await a.call('GET', `/admin/v1/customers/${freshUrn()}`), 404, 'CUSTOMER_NOT_FOUND', 'unknown customer')
})

for (const kind of STORE_KINDS) {
  t.test(`credits and debits on the ${kind.name} store`, async t => {
    const store = await kind.make(t)
    const { adminApp } = await buildApp(t, { store })
    const a = adminClient(adminApp)
    const urn = freshUrn()
    await a.customer(urn)
    const money = async (kind: 'credits' | 'debits', amount: unknown, reference: unknown): Promise<LightMyRequestResponse> =>
      await a.call('POST', `/admin/v1/customers/${urn}/${kind}`, { amount, reference })

    let res = await money('credits', '5000', 'c1')
    t.equal(res.statusCode, 200)
    t.same(res.json(), { urn, reference: 'c1', amount: '5000', available: '5000', replayed: false }, 'credited')
    res = await money('credits', '5000', 'c1')
    t.same(res.json(), { urn, reference: 'c1', amount: '5000', available: '5000', replayed: true }, 'replayed, not credited again')
    res = await money('credits', 5000, 'c1')
    t.match(res.json(), { available: '5000', replayed: true }, 'the amount as a number is the same amount')
    errorBody(t, await money('credits', '5001', 'c1'), 409, 'REFERENCE_CONFLICT', 'credit: same reference, other amount')
    t.equal(await a.available(urn), '5000', 'balance unchanged')

    res = await money('credits', 2500, 'c2')
    t.match(res.json(), { amount: '2500', available: '7500', replayed: false }, 'amount as a whole number')

    for (const [label, amount] of [
      ['"0"', '0'], ['"-1"', '-1'], ['"1.5"', '1.5'], ['1.5', 1.5], ['0', 0], ['-5', -5], ['""', ''], ['"abc"', 'abc'],
      ['"000"', '000'], ['16 digits', '1234567890123456'], ['null', null], ['true', true]
    ] as Array<[string, unknown]>) {
      errorBody(t, await money('credits', amount, `bad-c-${label}`), 400, String, `credit amount ${label}`)
      errorBody(t, await money('debits', amount, `bad-d-${label}`), 400, String, `debit amount ${label}`)
    }
    errorBody(t, await a.call('POST', `/admin/v1/customers/${urn}/credits`, { amount: '10' }), 400, String, 'reference missing')
    errorBody(t, await a.call('POST', `/admin/v1/customers/${urn}/credits`, { reference: 'x' }), 400, String, 'amount missing')
    errorBody(t, await money('credits', '10', ''), 400, String, 'reference empty')
    errorBody(t, await money('credits', '10', 'R'.repeat(51)), 400, String, 'reference of 51 characters')
    t.equal(await a.available(urn), '7500', 'refused calls moved nothing')

    res = await money('debits', '3000', 'd1')
    t.same(res.json(), { urn, reference: 'd1', amount: '3000', available: '4500', replayed: false }, 'debited')
    res = await money('debits', '3000', 'd1')
    t.match(res.json(), { available: '4500', replayed: true }, 'debit replayed')
    errorBody(t, await money('debits', '2999', 'd1'), 409, 'REFERENCE_CONFLICT', 'debit: same reference, other amount')
    t.equal(await a.available(urn), '4500')

    errorBody(t, await money('debits', '4501', 'd2'), 409, 'INSUFFICIENT_FUNDS', 'debit beyond the balance')
    t.equal(await a.available(urn), '4500', 'balance unchanged by a refused debit')
    // a refused debit used up nothing: its reference can go through once the funds are there
    await a.credit(urn, 1)
    res = await money('debits', '4501', 'd2')
    t.match(res.json(), { available: '0', replayed: false }, 'the same reference after a credit: debited to zero')
    errorBody(t, await money('debits', '1', 'd3'), 409, 'INSUFFICIENT_FUNDS', 'nothing left')

    // a credit reference and a debit reference live apart
    res = await money('debits', '1', 'c1')
    t.equal(res.statusCode, 409, 'a debit with a credit\'s reference is its own operation (refused here for funds)')
    t.match(res.json(), { error: 'INSUFFICIENT_FUNDS' })

    const other = freshUrn()
    errorBody(t, await a.call('POST', `/admin/v1/customers/${other}/credits`, { amount: '1', reference: 'x' }), 404, 'CUSTOMER_NOT_FOUND', 'credit to an unknown customer')
    errorBody(t, await a.call('POST', `/admin/v1/customers/${other}/debits`, { amount: '1', reference: 'x' }), 404, 'CUSTOMER_NOT_FOUND', 'debit from an unknown customer')

    const view = (await a.call('GET', `/admin/v1/customers/${urn}`)).json() as Record<string, unknown>
    t.equal(typeof view.available, 'string', 'available is a string')
    t.match(view.available, /^[0-9]+$/, 'of digits')
  })

  t.test(`decisions and reversals on the ${kind.name} store`, async t => {
    const store = await kind.make(t)
    const { publicApp, adminApp } = await buildApp(t, { store })
    const a = adminClient(adminApp)
    const urn = freshUrn()
    await a.customer(urn)
    await a.credit(urn, 10_000)
    const approve = async (amount = '1250'): Promise<string> => {
      const body = authBody({ urn, transactionAmount: amount })
      checkInjected(t, await auth(publicApp, body), { status: 200, code: '00', amount })
      return body.transactionReferenceNumber as string
    }
    const reversal = async (ref: string, body?: unknown): Promise<LightMyRequestResponse> =>
      await a.call('POST', `/admin/v1/customers/${urn}/decisions/${ref}/reversal`, body)

    errorBody(t, await a.call('GET', `/admin/v1/customers/${urn}/decisions/NO-SUCH-REF`), 404, 'DECISION_NOT_FOUND', 'no decision')
    errorBody(t, await reversal('NO-SUCH-REF', {}), 404, 'DECISION_NOT_FOUND', 'reversal of no decision')

    // whole reversal
    const A = await approve()
    t.equal(await a.available(urn), '8750')
    const recA = await a.decision(urn, A)
    t.match(recA, {
      v: 1, urn, reference: A, code: '00', reason: 'approved', ruleId: null, debit: 1250, shadowHits: [], answeredOnDeadline: false,
      arrivedAt: String, decidedAt: String, rulesVersion: String, request: { transactionAmount: '1250' }
    }, 'the decision as a journal entry: code, rule, shadow hits, debit, rules version, timings')
    t.notOk(recA !== null && ['released', 'reversedAt', 'fingerprint', 'attempt', 'limitEntries', 'meta', 'held'].some((k) => k in recA), 'nothing released yet, internal fields not shown')

    let res = await reversal(A, {})
    t.equal(res.statusCode, 200)
    t.same(res.json(), { urn, reference: A, released: '1250', available: '10000', replayed: false }, 'whole hold released')
    t.match(await a.decision(urn, A), { code: '00', debit: 1250, released: 1250, reversedAt: String })
    res = await reversal(A, {})
    t.same(res.json(), { urn, reference: A, released: '1250', available: '10000', replayed: true }, 'the same reversal again: replayed')
    t.equal(await a.available(urn), '10000', 'released once')
    errorBody(t, await reversal(A, { amount: '100' }), 409, 'ALREADY_REVERSED', 'another reversal of a reversed decision')
    t.equal(await a.available(urn), '10000')
    // the authorization itself replays as it was, without debiting again
    checkInjected(t, await auth(publicApp, authBody({ urn, transactionReferenceNumber: A })), { status: 200, code: '00', amount: '1250' }, 'authorization replayed after the reversal')
    t.equal(await a.available(urn), '10000', 'no new debit')

    // part reversal
    const B = await approve()
    t.equal(await a.available(urn), '8750')
    res = await reversal(B, { amount: '500' })
    t.same(res.json(), { urn, reference: B, released: '500', available: '9250', replayed: false }, 'part released')
    t.match(await a.decision(urn, B), { debit: 1250, released: 500, reversedAt: String })
    res = await reversal(B, { amount: 500 })
    t.match(res.json(), { released: '500', available: '9250', replayed: true }, 'the same part again (as a number): replayed')
    errorBody(t, await reversal(B, {}), 409, 'ALREADY_REVERSED', 'whole reversal after a part one')
    errorBody(t, await reversal(B, { amount: '600' }), 409, 'ALREADY_REVERSED', 'another part after a part one')
    t.equal(await a.available(urn), '9250')

    // more than the hold
    const C = await approve()
    t.equal(await a.available(urn), '8000')
    errorBody(t, await reversal(C, { amount: '1251' }), 409, 'EXCEEDS_HOLD', 'part larger than the hold')
    t.equal(await a.available(urn), '8000', 'nothing released')
    for (const [label, amount] of [['"0"', '0'], ['"1.5"', '1.5'], ['1.5', 1.5], ['"-1"', '-1']] as Array<[string, unknown]>) {
      errorBody(t, await reversal(C, { amount }), 400, String, `reversal amount ${label}`)
    }
    // a refused reversal changed nothing: the hold can still be released, here with no body at all
    res = await a.call('POST', `/admin/v1/customers/${urn}/decisions/${C}/reversal`, undefined, { authorization: adminHeaders.authorization })
    t.equal(res.statusCode, 200, 'reversal without a body')
    t.match(res.json(), { released: '1250', available: '9250', replayed: false })

    // a declined decision holds nothing to release
    const poor = authBody({ urn, transactionAmount: '999999' })
    checkInjected(t, await auth(publicApp, poor), { status: 200, code: '51', amount: '999999' })
    t.match(await a.decision(urn, poor.transactionReferenceNumber as string), { code: '51', reason: 'insufficient_funds', availableSeen: 9250, debit: 999999 })
    errorBody(t, await reversal(poor.transactionReferenceNumber as string, {}), 409, 'NOT_APPROVED', 'reversal of a declined decision')
    t.equal(await a.available(urn), '9250')
  })
}

t.test('the rule set: GET and reload', async t => {
  const gambling = JSON.stringify({ rules: [{ id: 'block-gambling', when: { mcc: { in: ['7995'] } }, then: { decline: '05' } }] })
  const dir = await rulesDir(t, { '10-merchant.json': gambling })
  const { publicApp, adminApp } = await buildApp(t, { env: { RULES_DIR: dir } })
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 100_000)

  let res = await a.call('GET', '/admin/v1/rules')
  t.equal(res.statusCode, 200)
  const first = res.json() as { version: string, loadedAt: string, rules: Array<{ id: string }> }
  t.match(first, { version: /^[0-9a-f]+$/, loadedAt: String, rules: [{ id: 'block-gambling' }] }, 'version, loadedAt and the rules')
  t.ok(Number.isFinite(Date.parse(first.loadedAt)), 'loadedAt is a date')

  res = await a.call('POST', '/admin/v1/rules/reload')
  t.equal(res.statusCode, 200, 'reload of the same files')
  t.match(res.json(), { version: first.version, rules: 1 }, 'same files, same version')

  // a broken file: refused whole with the errors, the running set stays
  await writeFile(join(dir, '20-more.json'), '{ "rules": [ { "id": "x", ')
  res = await a.call('POST', '/admin/v1/rules/reload')
  errorBody(t, res, 422, 'RULES_INVALID', 'broken file')
  const refused = res.json() as { errors: Array<Record<string, unknown>>, version: string }
  t.ok(refused.errors.length > 0, 'the errors are listed')
  t.match(refused.errors[0], { file: /20-more\.json/, code: 'RULE_JSON_INVALID', reason: String }, 'naming the file and the reason')
  t.equal(refused.version, first.version, 'the answer names the version still running')
  t.equal(((await a.call('GET', '/admin/v1/rules')).json() as { version: string }).version, first.version, 'version unchanged')
  checkInjected(t, await auth(publicApp, authBody({ urn, mcc: '7995' })), { status: 200, code: '05', amount: '1250' }, 'the old rule still declines')

  // a valid file that breaks a rule of the set: also refused whole
  await writeFile(join(dir, '20-more.json'), JSON.stringify({ rules: [{ id: 'block-gambling', when: { mcc: { eq: '5411' } }, then: { decline: '05' } }] }))
  res = await a.call('POST', '/admin/v1/rules/reload')
  errorBody(t, res, 422, 'RULES_INVALID', 'duplicate id across files')
  t.match((res.json() as { errors: unknown[] }).errors, [{ code: 'RULE_ID_DUPLICATE' }])

  // fixed: a new version, and the public route decides with it
  await writeFile(join(dir, '20-more.json'), JSON.stringify({ rules: [{ id: 'block-grocery', when: { mcc: { eq: '5411' } }, then: { decline: '34' } }] }))
  checkInjected(t, await auth(publicApp, authBody({ urn, mcc: '5411' })), { status: 200, code: '00', amount: '1250' }, 'before the reload')
  res = await a.call('POST', '/admin/v1/rules/reload')
  t.equal(res.statusCode, 200, 'fixed: reloaded')
  const reloaded = res.json() as { version: string, rules: number }
  t.equal(reloaded.rules, 2)
  t.not(reloaded.version, first.version, 'a new version')
  const now = (await a.call('GET', '/admin/v1/rules')).json() as { version: string, rules: Array<{ id: string }> }
  t.equal(now.version, reloaded.version)
  t.same(now.rules.map(r => r.id), ['block-gambling', 'block-grocery'], 'files in name order')
  checkInjected(t, await auth(publicApp, authBody({ urn, mcc: '5411' })), { status: 200, code: '34', amount: '1250' }, 'the new rule declines')
  checkInjected(t, await auth(publicApp, authBody({ urn, mcc: '7995' })), { status: 200, code: '05', amount: '1250' }, 'the old one still does')
})

t.test('an unknown field in an admin body is refused, not dropped', async (t) => {
  const { adminApp } = await buildApp(t)
  const res = await adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/UNKNOWNFIELD', headers: adminHeaders, payload: { status: 'ACTIVE', stauts: 'BLOCKED' } })
  t.equal(res.statusCode, 400)
  t.equal(res.json().error, 'VALIDATION')
  const get = await adminApp.inject({ method: 'GET', url: '/admin/v1/customers/UNKNOWNFIELD', headers: adminHeaders })
  t.equal(get.statusCode, 404, 'nothing was created')
})

t.test('credit and debit references cannot take the card lifecycle\'s own (load:, transfer:)', async (t) => {
  const { adminApp } = await buildApp(t)
  await adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/NSPACE1', headers: adminHeaders, payload: {} })
  for (const reference of ['load:MR1', 'transfer:TX1', 'a:b']) {
    const res = await adminApp.inject({ method: 'POST', url: '/admin/v1/customers/NSPACE1/credits', headers: adminHeaders, payload: { amount: '100', reference } })
    t.equal(res.statusCode, 400, reference)
  }
  const get = await adminApp.inject({ method: 'GET', url: '/admin/v1/customers/NSPACE1', headers: adminHeaders })
  t.equal(get.json().available, '0')
})
