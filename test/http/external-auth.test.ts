// POST /api/v1/externalAuth through app.inject (README "The decision"): caller checks, body validation, every
// decision row on the memory store and on a real Redis, idempotency, a rule decline, store errors, the
// deadline guard, and the decision log line.
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { CONSUMER_KEY, answerDueMs } from '../helpers/config.js'
import {
  STORE_KINDS, adminClient, buildApp, auth, authBody, checkInjected, failingStore, freshUrn, hangingStore, metricValue,
  lateStore, platformHeaders, rulesDir
} from '../helpers/http-checks.js'

const GAMBLING_RULES = JSON.stringify({
  rules: [{ id: 'block-gambling', when: { mcc: { in: ['7995'] } }, then: { decline: '05' } }]
})

t.test('caller checks: 401 for a wrong or missing platform header, 403 for a source not allowed', async t => {
  const { publicApp, adminApp } = await buildApp(t, { env: { EXTAUTH_ENTITY_IDS: '0001,0002' } })
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 1_000_000)

  const unauthorized: Array<[string, Record<string, string | undefined>]> = [
    ['X-Consumer-Custom-ID wrong', { 'x-consumer-custom-id': 'not-the-key' }],
    ['X-Consumer-Custom-ID missing', { 'x-consumer-custom-id': undefined }],
    ['X-Consumer-Custom-ID empty', { 'x-consumer-custom-id': '' }],
    ['X-Consumer-Custom-ID with a suffix', { 'x-consumer-custom-id': CONSUMER_KEY + 'x' }],
    ['clientId wrong', { clientid: 'client-2' }],
    ['clientId missing', { clientid: undefined }],
    ['bankId wrong', { bankid: '9999' }],
    ['bankId missing', { bankid: undefined }],
    ['entityId not accepted', { entityid: '0003' }],
    ['entityId empty', { entityid: '' }]
  ]
  for (const [label, over] of unauthorized) {
    const res = await auth(publicApp, authBody({ urn }), { headers: platformHeaders(over) })
    // a refused caller's body is never read, so nothing of it is echoed
    checkInjected(t, res, { status: 401, code: '05', amount: '' }, label)
  }
  t.equal(await a.available(urn), '1000000', 'nothing debited by refused calls')

  // the caller is refused before its body is read: a bad body from a wrong caller is still a 401
  const res401 = await auth(publicApp, '{not json', { headers: platformHeaders({ clientid: 'nope' }) })
  checkInjected(t, res401, { status: 401, code: '05' }, 'wrong caller with a bad body')

  for (const [label, over] of [
    ['entityId accepted', { entityid: '0002' }],
    ['entityId absent', {}]
  ] as Array<[string, Record<string, string>]>) {
    const res = await auth(publicApp, authBody({ urn }), { headers: platformHeaders(over) })
    checkInjected(t, res, { status: 200, code: '00', amount: '1250' }, label)
  }
})

t.test('any entityId is accepted when EXTAUTH_ENTITY_IDS is empty', async t => {
  const { publicApp } = await buildApp(t)
  const res = await auth(publicApp, authBody(), { headers: platformHeaders({ entityid: '4711' }) })
  checkInjected(t, res, { status: 200, code: '14', amount: '1250' })
})

t.test('source addresses: ALLOWED_SOURCE_IPS', async t => {
  const { publicApp, adminApp } = await buildApp(t, { env: { ALLOWED_SOURCE_IPS: '10.0.0.0/8, 192.168.7.7' } })
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 100_000)
  for (const ip of ['192.168.1.1', '11.0.0.1', '192.168.7.8', '127.0.0.1', '::1']) {
    const res = await auth(publicApp, authBody({ urn }), { remoteAddress: ip })
    checkInjected(t, res, { status: 403, code: '05', amount: '' }, `source ${ip}`)
  }
  // a source not allowed is refused even with the right headers, and before the headers are looked at
  const wrongBoth = await auth(publicApp, authBody({ urn }), { remoteAddress: '11.0.0.1', headers: platformHeaders({ bankid: '0000' }) })
  checkInjected(t, wrongBoth, { status: 403, code: '05' }, 'source and header wrong: 403')
  t.equal(await a.available(urn), '100000', 'nothing debited by refused sources')

  for (const ip of ['10.1.2.3', '192.168.7.7', '::ffff:10.9.9.9']) {
    const res = await auth(publicApp, authBody({ urn }), { remoteAddress: ip })
    checkInjected(t, res, { status: 200, code: '00', amount: '1250' }, `source ${ip}`)
  }
  const wrongHeader = await auth(publicApp, authBody({ urn }), { remoteAddress: '10.1.2.3', headers: platformHeaders({ bankid: '0000' }) })
  checkInjected(t, wrongHeader, { status: 401, code: '05' }, 'allowed source, wrong header: 401')
})

t.test('bad bodies: 400 with the answer shape', async t => {
  const { publicApp, adminApp } = await buildApp(t)
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 1_000_000)

  const raw: Array<[string, string, Record<string, string | undefined>?]> = [
    ['not JSON', '{"urn": "x",'],
    ['not JSON at all', 'hello'],
    ['an array', JSON.stringify([authBody({ urn })])],
    ['a number', '1250'],
    ['null', 'null'],
    ['a string', '"urn"'],
    ['true', 'true'],
    ['an empty body', ''],
    ['unsupported content-type text/plain', JSON.stringify(authBody({ urn })), { 'content-type': 'text/plain' }],
    ['unsupported content-type form', 'urn=1', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['__proto__ in the body', `{"__proto__": {"x": 1}, ${JSON.stringify(authBody({ urn })).slice(1)}`]
  ]
  for (const [label, payload, over] of raw) {
    const res = await auth(publicApp, payload, { headers: platformHeaders(over ?? {}) })
    checkInjected(t, res, { status: 400, code: '05' }, label)
  }

  // oversize: > 16 KiB is refused; exactly 16 KiB is not (the limit is the contract's, not lower)
  const sized = (bytes: number): string => {
    const base = JSON.stringify({ ...authBody({ urn }), pad: '' })
    return base.slice(0, -2) + 'x'.repeat(bytes - base.length) + '"}'
  }
  const over = sized(16 * 1024 + 1)
  t.equal(Buffer.byteLength(over), 16 * 1024 + 1)
  checkInjected(t, await auth(publicApp, over), { status: 400, code: '05' }, 'body of 16 KiB + 1')
  checkInjected(t, await auth(publicApp, sized(64 * 1024)), { status: 400, code: '05' }, 'body of 64 KiB')
  const exact = sized(16 * 1024)
  t.equal(Buffer.byteLength(exact), 16 * 1024)
  checkInjected(t, await auth(publicApp, exact), { status: 200, code: '00', amount: '1250' }, 'body of exactly 16 KiB')

  const required = ['urn', 'terminalId', 'systemTraceAuditNumber', 'cardNetwork', 'channel', 'transactionAmount',
    'transactionReferenceNumber', 'last4Digits']
  for (const field of required) {
    const body = authBody({ urn })
    delete body[field]
    const res = await auth(publicApp, body)
    checkInjected(t, res, { status: 400, code: '05', amount: field === 'transactionAmount' ? '' : '1250' }, `${field} missing`)
    const empty = await auth(publicApp, authBody({ urn, [field]: '' }))
    checkInjected(t, empty, { status: 400, code: '05', amount: field === 'transactionAmount' ? '' : '1250' }, `${field} empty`)
    const nul = await auth(publicApp, authBody({ urn, [field]: null }))
    checkInjected(t, nul, { status: 400, code: '05', amount: field === 'transactionAmount' ? '' : '1250' }, `${field} null`)
  }

  const malformed: Array<[string, Record<string, unknown>, { amount: string, currency?: string }]> = [
    ['systemTraceAuditNumber "1234567"', { systemTraceAuditNumber: '1234567' }, { amount: '1250' }],
    ['systemTraceAuditNumber "12a"', { systemTraceAuditNumber: '12a' }, { amount: '1250' }],
    ['systemTraceAuditNumber a number', { systemTraceAuditNumber: 162 }, { amount: '1250' }],
    ['channel "FOO"', { channel: 'FOO' }, { amount: '1250' }],
    ['channel "pos"', { channel: 'pos' }, { amount: '1250' }],
    ['last4Digits "123"', { last4Digits: '123' }, { amount: '1250' }],
    ['last4Digits "12345"', { last4Digits: '12345' }, { amount: '1250' }],
    ['last4Digits "12a4"', { last4Digits: '12a4' }, { amount: '1250' }],
    ['transactionAmount "12.50"', { transactionAmount: '12.50' }, { amount: '' }],
    ['transactionAmount 1250 (a number)', { transactionAmount: 1250 }, { amount: '' }],
    ['transactionAmount "-1250"', { transactionAmount: '-1250' }, { amount: '' }],
    ['transactionAmount of 16 digits', { transactionAmount: '1234567890123456' }, { amount: '' }],
    ['currencyCode "35"', { currencyCode: '35' }, { amount: '1250', currency: '356' }],
    ['currencyCode "USD"', { currencyCode: 'USD' }, { amount: '1250', currency: '356' }],
    ['fee "1.5"', { fee: '1.5' }, { amount: '1250' }],
    ['billingAmount "x"', { billingAmount: 'x' }, { amount: '1250' }],
    ['mcc "59a1"', { mcc: '59a1' }, { amount: '1250' }],
    ['urn of 21 characters', { urn: 'U'.repeat(21) }, { amount: '1250' }],
    ['transactionReferenceNumber of 51 characters', { transactionReferenceNumber: 'R'.repeat(51) }, { amount: '1250' }],
    ['channel "FOO" with currencyCode 840', { channel: 'FOO', currencyCode: '840' }, { amount: '1250', currency: '840' }]
  ]
  for (const [label, over, want] of malformed) {
    const res = await auth(publicApp, authBody({ urn, ...over }))
    checkInjected(t, res, { status: 400, code: '05', amount: want.amount, currency: want.currency ?? '356' }, label)
  }
  // only the exactly-16-KiB body was decided
  t.equal(await a.available(urn), String(1_000_000 - 1250), 'no refused body debited anything')
})

t.test('bodies the contract accepts', async t => {
  const { publicApp, adminApp } = await buildApp(t)
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 1_000_000)
  let spent = 0
  const accepted: Array<[string, Record<string, unknown>]> = [
    ['systemTraceAuditNumber "162"', { systemTraceAuditNumber: '162' }],
    ['systemTraceAuditNumber "000162"', { systemTraceAuditNumber: '000162' }],
    ['channel POS-Contactless', { channel: 'POS-Contactless' }],
    ['channel ATM', { channel: 'ATM' }],
    ['channel ECOM', { channel: 'ECOM' }],
    ['orignialRrn (the sample\'s spelling)', { orignialRrn: '123456789012' }],
    ['originalRrn', { originalRrn: '123456789012' }],
    ['both spellings', { originalRrn: '1', orignialRrn: '2' }],
    ['unknown extra fields', { somethingNew: 'x', nested: { a: [1, 2] }, n: 5, entityId: '0001' }]
  ]
  for (const [label, over] of accepted) {
    const res = await auth(publicApp, authBody({ urn, ...over }))
    checkInjected(t, res, { status: 200, code: '00', amount: '1250' }, label)
    spent += 1250
  }
  const minimal = {
    urn, terminalId: 'T1', systemTraceAuditNumber: '1', cardNetwork: 'RUPAY', channel: 'POS', transactionAmount: '700',
    transactionReferenceNumber: `MIN-${Date.now()}`, last4Digits: '0000'
  }
  checkInjected(t, await auth(publicApp, minimal), { status: 200, code: '00', amount: '700', currency: '356' }, 'only the required fields')
  spent += 700
  checkInjected(t, await auth(publicApp, authBody({ urn, currencyCode: '840' })), { status: 200, code: '00', amount: '1250', currency: '840' }, 'currencyCode echoed')
  spent += 1250
  checkInjected(t, await auth(publicApp, JSON.stringify(authBody({ urn })), { headers: platformHeaders({ 'content-type': 'application/json; charset=utf-8' }) }),
    { status: 200, code: '00', amount: '1250' }, 'content-type with charset')
  spent += 1250
  t.equal(await a.available(urn), String(1_000_000 - spent), 'each accepted body debited its amount once')
})

/** Every optional field of the request, sent as "". */
const OPTIONAL_AS_EMPTY = {
  customerId: '', merchantName: '', mcc: '', merchantId: '', fee: '', currencyCode: '', originalRrn: '', orignialRrn: '',
  billingCurrency: '', billingAmount: '', entityId: ''
}

for (const kind of STORE_KINDS) {
  t.test(`optional fields as "" are absent to every reader, on the ${kind.name} store`, async t => {
    // Each reader of an optional field is set up so that a "" taken as present declines or shows: shadow rules
    // (recorded, never deciding) on crossBorder and on `exists` of every optional field, a card with
    // international use off, a card with a daily international limit below one purchase.
    const optionalStringFields = Object.keys(OPTIONAL_AS_EMPTY).filter((f) => f !== 'fee' && f !== 'billingAmount')
    const rules = JSON.stringify({
      rules: [
        { id: 'cross-border', mode: 'shadow', when: { crossBorder: { eq: true } }, then: { decline: '05' } },
        ...optionalStringFields.map((f) => ({ id: `sent-${f}`, mode: 'shadow', when: { [f]: { exists: true } }, then: { decline: '05' } })),
        { id: 'fee-sent', mode: 'shadow', when: { fee: { exists: true } }, then: { decline: '05' } },
        { id: 'billing-amount-sent', mode: 'shadow', when: { billingAmount: { exists: true } }, then: { decline: '05' } }
      ]
    })
    const store = await kind.make(t)
    const { publicApp, adminApp } = await buildApp(t, { store, env: { RULES_DIR: await rulesDir(t, { 'r.json': rules }) } })
    const a = adminClient(adminApp)
    const urn = freshUrn()
    await a.customer(urn)
    await a.credit(urn, 1_000_000)
    const controls = async (last4: string, body: unknown): Promise<void> => {
      await a.card(urn, last4, 'ACTIVE')
      const res = await a.call('PATCH', `/admin/v1/customers/${urn}/cards/${last4}/controls`, body)
      t.equal(res.statusCode, 200, `controls of ${last4} set`)
    }
    await controls('1111', { international: { enabled: false } })
    await controls('2222', { international: { enabled: true, dailyMax: 1000 } })

    // the set-up declines or records what it should when the fields are really there
    const abroad = authBody({ urn, last4Digits: '1111', billingCurrency: '840', billingAmount: '900' })
    checkInjected(t, await auth(publicApp, abroad), { status: 200, code: '05', amount: '1250' }, 'international off: a cross-border purchase is declined')
    const abroadRec = await a.decision(urn, abroad.transactionReferenceNumber as string)
    t.match(abroadRec, { control: { kind: 'international' } }, 'declined by the international control')
    const overDaily = authBody({ urn, last4Digits: '2222', billingCurrency: '840' })
    checkInjected(t, await auth(publicApp, overDaily), { status: 200, code: '61', amount: '1250' }, 'a cross-border purchase over the daily international limit is declined')
    t.match(await a.decision(urn, overDaily.transactionReferenceNumber as string), { control: { kind: 'international', check: 'dailyMax' } })

    const sends: Array<[string, Record<string, unknown>]> = [
      ['every optional field ""', OPTIONAL_AS_EMPTY],
      ['billingCurrency "" with currencyCode 356', { ...OPTIONAL_AS_EMPTY, currencyCode: '356' }],
      ['currencyCode "" with billingCurrency 356 (DEFAULT_CURRENCY)', { ...OPTIONAL_AS_EMPTY, billingCurrency: '356' }]
    ]
    let spent = 0
    for (const last4 of ['1111', '2222']) {
      for (const [label, over] of sends) {
        const body = authBody({ urn, last4Digits: last4, ...over })
        const l = `${label}, card ${last4}`
        checkInjected(t, await auth(publicApp, body), { status: 200, code: '00', amount: '1250', currency: '356' }, `${l}: a domestic purchase, approved`)
        spent += 1250
        const rec = await a.decision(urn, body.transactionReferenceNumber as string) as { shadowHits?: string[], request?: Record<string, unknown> } | null
        const hits = rec?.shadowHits ?? []
        const sent = Object.keys(over).filter((f) => over[f] !== '')
        t.same(hits, sent.map((f) => `sent-${f}`), `${l}: no rule saw a "" field as present, nor the purchase as cross-border`)
        const stored = rec?.request ?? {}
        t.equal(stored.currencyCode, sent.includes('currencyCode') ? '356' : undefined, `${l}: the journal keeps the currency sent, or none, never ""`)
        t.same(Object.keys(stored).filter((f) => Object.hasOwn(OPTIONAL_AS_EMPTY, f)).sort(), sent.sort(), `${l}: the journal keeps no "" field`)
      }
    }
    t.equal(await a.available(urn), String(1_000_000 - spent), 'each purchase debited once')
  })
}

t.test('DEFAULT_CURRENCY and TIMEZONE shape the answer', async t => {
  const at = Date.UTC(2026, 10, 21, 9, 30, 15)
  const { publicApp } = await buildApp(t, { env: { DEFAULT_CURRENCY: '840', TIMEZONE: 'Asia/Kolkata' }, clock: () => at })
  const body = authBody()
  delete body.currencyCode
  const res = await auth(publicApp, body)
  const ans = checkInjected(t, res, { status: 200, code: '14', amount: '1250', currency: '840' })
  t.equal(ans.responseDateTime, '20261121150015', 'responseDateTime in TIMEZONE (UTC+5:30)')
  const bad = checkInjected(t, await auth(publicApp, '[]'), { status: 400, code: '05', currency: '840' })
  t.equal(bad.responseDateTime, '20261121150015', 'error answers too')
  const refused = checkInjected(t, await auth(publicApp, body, { headers: platformHeaders({ bankid: '1' }) }), { status: 401, code: '05', currency: '840' })
  t.equal(refused.responseDateTime, '20261121150015')
})

for (const kind of STORE_KINDS) {
  t.test(`decision rows on the ${kind.name} store`, async t => {
    const store = await kind.make(t)
    const { publicApp, adminApp } = await buildApp(t, { store })
    const a = adminClient(adminApp)

    const decide = async (label: string, over: Record<string, unknown>, code: string, amount = '1250'): Promise<string> => {
      const body = authBody(over)
      const res = await auth(publicApp, body)
      checkInjected(t, res, { status: 200, code, amount }, label)
      return body.transactionReferenceNumber as string
    }

    // urn unknown
    const unknown = freshUrn()
    const ref14 = await decide('urn unknown', { urn: unknown }, '14')
    t.equal((await a.decision(unknown, ref14))?.code, '14', 'the decision is stored')

    // approved: funds held
    const urn = freshUrn()
    await a.customer(urn)
    await a.credit(urn, 10_000)
    const ref00 = await decide('funds available', { urn }, '00')
    t.equal(await a.available(urn), '8750', 'the debit is held')
    const rec = await a.decision(urn, ref00)
    t.match(rec, { code: '00', debit: 1250 }, 'the decision record holds the debit')
    t.notOk(Object.hasOwn(rec as object, 'released'), 'none of it released')

    // billingAmount + fee is the debit amount; transactionAmount is still echoed
    await decide('billingAmount + fee', { urn, billingCurrency: '840', billingAmount: '1000', fee: '30' }, '00')
    t.equal(await a.available(urn), String(8750 - 1030), 'billingAmount + fee debited')
    await decide('transactionAmount + fee', { urn, fee: '25' }, '00')
    t.equal(await a.available(urn), String(8750 - 1030 - 1275), 'transactionAmount + fee debited')
    // 8750 - 1030 - 1275 = 6445

    // insufficient funds, then exactly the balance
    await decide('debit above the balance', { urn, transactionAmount: '6446' }, '51', '6446')
    await decide('transaction within, billingAmount above the balance', { urn, transactionAmount: '100', billingAmount: '6446' }, '51', '100')
    await decide('transaction within, fee takes it above', { urn, transactionAmount: '6440', fee: '6' }, '51', '6440')
    t.equal(await a.available(urn), '6445', 'nothing held on 51')
    await decide('debit equal to the balance', { urn, transactionAmount: '6445' }, '00', '6445')
    t.equal(await a.available(urn), '0', 'balance down to zero')
    await decide('nothing left', { urn, transactionAmount: '1' }, '51', '1')

    // customer state
    const blocked = freshUrn()
    await a.customer(blocked, { status: 'BLOCKED' })
    await a.credit(blocked, 10_000)
    await decide('customer BLOCKED', { urn: blocked }, '05')
    const closed = freshUrn()
    await a.customer(closed)
    await a.credit(closed, 10_000)
    await a.customer(closed, { status: 'CLOSED' })
    await decide('customer CLOSED', { urn: closed }, '05')
    t.equal(await a.available(blocked), '10000', 'nothing held for a blocked customer')
    t.equal(await a.available(closed), '10000', 'nothing held for a closed customer')

    // card state
    const carded = freshUrn()
    await a.customer(carded)
    await a.credit(carded, 100_000)
    await a.card(carded, '1111', 'ACTIVE')
    await a.card(carded, '2222', 'LOST')
    await a.card(carded, '3333', 'STOLEN')
    await a.card(carded, '4444', 'BLOCKED')
    await decide('card LOST', { urn: carded, last4Digits: '2222' }, '41')
    await decide('card STOLEN', { urn: carded, last4Digits: '3333' }, '43')
    await decide('card BLOCKED', { urn: carded, last4Digits: '4444' }, '05')
    await decide('card not registered while others are', { urn: carded, last4Digits: '5555' }, '14')
    t.equal(await a.available(carded), '100000', 'nothing held for card declines')
    await decide('card ACTIVE', { urn: carded, last4Digits: '1111' }, '00')
    t.equal(await a.available(carded), String(100_000 - 1250))
    // customer state comes before card state
    await a.customer(carded, { status: 'BLOCKED' })
    await decide('customer BLOCKED, card LOST', { urn: carded, last4Digits: '2222' }, '05')
    // a card declined though funds are short: the card's code, not 51
    await a.customer(carded, { status: 'ACTIVE' })
    await decide('card STOLEN and amount above the balance', { urn: carded, last4Digits: '3333', transactionAmount: '999999999' }, '43', '999999999')

    // no cards registered: any last4Digits goes on
    const cardless = freshUrn()
    await a.customer(cardless)
    await a.credit(cardless, 5000)
    await decide('no cards registered', { urn: cardless, last4Digits: '9876' }, '00')
    t.equal(await a.available(cardless), '3750')
  })

  t.test(`idempotency on the ${kind.name} store`, async t => {
    const store = await kind.make(t)
    const { publicApp, adminApp, logs } = await buildApp(t, { store })
    const a = adminClient(adminApp)
    const urn = freshUrn()
    await a.customer(urn)
    await a.credit(urn, 5000)
    await a.card(urn, '4321', 'ACTIVE')
    await a.card(urn, '8765', 'ACTIVE')

    const body = authBody({ urn })
    const ref = body.transactionReferenceNumber as string
    const first = checkInjected(t, await auth(publicApp, body), { status: 200, code: '00', amount: '1250' }, 'first')
    const second = checkInjected(t, await auth(publicApp, body), { status: 200, code: '00', amount: '1250' }, 'replay')
    t.equal(second.responseCode, first.responseCode)
    t.equal(await a.available(urn), '3750', 'debited once')
    const replayLine = logs.filter(l => l.msg === 'decision' && l.reference === ref)
    t.equal(replayLine.length, 2)
    t.equal(replayLine[1]?.replayed, true, 'the replay is logged as one')

    const conflicts: Array<[string, Record<string, unknown>]> = [
      ['another amount', { transactionAmount: '2000' }],
      ['another fee', { fee: '1' }],
      ['another billingAmount', { billingAmount: '999' }],
      ['another card', { last4Digits: '8765' }]
    ]
    for (const [label, over] of conflicts) {
      const res = await auth(publicApp, { ...body, ...over })
      checkInjected(t, res, { status: 200, code: '05' }, `same reference, ${label}`)
    }
    t.equal(await a.available(urn), '3750', 'conflicts hold nothing')
    t.match(await a.decision(urn, ref), { code: '00', debit: 1250, last4: '4321' }, 'the original decision is unchanged')
    t.ok(logs.some(l => l.msg === 'decision' && l.reference === ref && l.reason === 'conflict'), 'the conflict is logged')
    checkInjected(t, await auth(publicApp, body), { status: 200, code: '00', amount: '1250' }, 'the original request still replays 00')
    // other fields than amount and card do not make a conflict
    checkInjected(t, await auth(publicApp, { ...body, systemTraceAuditNumber: '999', terminalId: 'T9' }), { status: 200, code: '00', amount: '1250' }, 'same amount and card, other trace number')
    t.equal(await a.available(urn), '3750')

    // a decline replays as the decline even when it would now be approved
    const poor = authBody({ urn, transactionAmount: '9000' })
    checkInjected(t, await auth(publicApp, poor), { status: 200, code: '51', amount: '9000' }, 'insufficient')
    await a.credit(urn, 10_000)
    checkInjected(t, await auth(publicApp, poor), { status: 200, code: '51', amount: '9000' }, 'replayed 51 after a credit')
    t.equal(await a.available(urn), '13750', 'the replay holds nothing')

    // the same reference on another urn is another transaction
    const other = freshUrn()
    await a.customer(other)
    await a.credit(other, 5000)
    checkInjected(t, await auth(publicApp, { ...body, urn: other }), { status: 200, code: '00', amount: '1250' }, 'same reference, other urn')
    t.equal(await a.available(other), '3750')
  })

  t.test(`a rule decline on the ${kind.name} store`, async t => {
    const dir = await rulesDir(t, { '10-merchant.json': GAMBLING_RULES })
    const store = await kind.make(t)
    const { publicApp, adminApp } = await buildApp(t, { store, env: { RULES_DIR: dir } })
    const a = adminClient(adminApp)
    const urn = freshUrn()
    await a.customer(urn)
    await a.credit(urn, 5000)
    const body = authBody({ urn, mcc: '7995' })
    checkInjected(t, await auth(publicApp, body), { status: 200, code: '05', amount: '1250' }, 'gambling mcc')
    const rec = await a.decision(urn, body.transactionReferenceNumber as string)
    t.match(rec, { code: '05', reason: 'rule', ruleId: 'block-gambling' }, 'the record names the rule')
    t.equal(await a.available(urn), '5000', 'nothing debited')
    checkInjected(t, await auth(publicApp, authBody({ urn, mcc: '5411' })), { status: 200, code: '00', amount: '1250' }, 'other mcc')
    t.equal(await a.available(urn), '3750')
    // the card state comes before the rules
    await a.card(urn, '4321', 'LOST')
    checkInjected(t, await auth(publicApp, authBody({ urn, mcc: '7995' })), { status: 200, code: '41', amount: '1250' }, 'lost card at a gambling mcc')
  })
}

t.test('a store error answers 200 with 05', async t => {
  const { publicApp, adminApp, logs } = await buildApp(t, { store: failingStore() })
  const body = authBody()
  const res = await auth(publicApp, body)
  checkInjected(t, res, { status: 200, code: '05', amount: '1250' })
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.equal(metricValue(metrics, 'extauth_store_errors_total{op="authorize"}'), 1, 'store error counted')
  const line = logs.find(l => l.msg === 'decision' && l.reference === body.transactionReferenceNumber)
  t.match(line, { code: '05', reason: 'store_error' }, 'logged as a store error')
})

t.test('the deadline: a store that never answers gets 05 by DECISION_DEADLINE_MS', async t => {
  const deadlineMs = 300
  const { publicApp, adminApp, logs } = await buildApp(t, { store: hangingStore(), env: { DECISION_DEADLINE_MS: String(deadlineMs) } })
  const body = authBody()
  const t0 = performance.now()
  const res = await auth(publicApp, body)
  const elapsed = performance.now() - t0
  checkInjected(t, res, { status: 200, code: '05', amount: '1250' })
  t.ok(elapsed <= answerDueMs(deadlineMs), `answered by ${answerDueMs(deadlineMs)} ms, on the configured deadline (${Math.round(elapsed)} ms)`)
  t.ok(elapsed >= deadlineMs - 20, `not before the deadline (${Math.round(elapsed)} ms)`)
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.equal(metricValue(metrics, 'extauth_deadline_hits_total'), 1, 'deadline hit counted')
  t.equal(metricValue(metrics, 'extauth_decisions_total{code="05",reason="deadline"}'), 1, 'decision counted with reason deadline')
  const line = logs.find(l => l.msg === 'decision' && l.reference === body.transactionReferenceNumber)
  t.match(line, { code: '05', reason: 'deadline' }, 'logged as a deadline answer')
})

for (const kind of STORE_KINDS) {
  for (const mode of ['commit-late', 'reply-late'] as const) {
    t.test(`the deadline keeps no debit when the ${kind.name} store is late (${mode})`, async t => {
      const deadlineMs = 300
      const late = lateStore(await kind.make(t), mode)
      const { publicApp, adminApp, deps } = await buildApp(t, { store: late.store, env: { DECISION_DEADLINE_MS: String(deadlineMs) } })
      const a = adminClient(adminApp)
      const urn = freshUrn()
      await a.customer(urn)
      await a.credit(urn, 10_000)
      const body = authBody({ urn })
      const ref = body.transactionReferenceNumber as string
      // the store holds this call until the answer is out: only the guard can answer it
      const res = await auth(publicApp, body)
      checkInjected(t, res, { status: 200, code: '05', amount: '1250' }, 'answered by the guard')

      // now the store decides (commit-late) or replies (reply-late); the compensation follows (bounded)
      late.release()
      await late.settled()
      const until = Date.now() + 5000
      while (deps.compensator.pending > 0 && Date.now() < until) await sleep(20)
      t.equal(deps.compensator.pending, 0, 'compensation done')
      t.equal(await a.available(urn), '10000', 'no debit kept')
      const answered = await a.decision(urn, ref) as { debit: number, released?: number }
      t.match(answered, { code: '05', answeredOnDeadline: true }, 'the stored decision is the 05 that was answered')
      t.equal(answered.debit - (answered.released ?? 0), 0, 'none of its debit kept')
      checkInjected(t, await auth(publicApp, body), { status: 200, code: '05', amount: '1250' }, 'the same request again: the 05 it was given')
      await late.settled()
      t.equal(await a.available(urn), '10000', 'still no debit')
    })
  }
}

t.test('overload: the route answers 200 with 05 at once', async t => {
  // a heap limit of 1 byte puts the app under pressure from its first sample on
  const { publicApp, adminApp } = await buildApp(t, { env: { SHED_HEAP_USED_BYTES: '1' } })
  // the heap is sampled every 250 ms; the bound only ends a wait that would never end
  const until = Date.now() + 10_000
  while (!publicApp.isUnderPressure() && Date.now() < until) await sleep(10)
  t.ok(publicApp.isUnderPressure(), 'under pressure')
  const urn = freshUrn()
  const a = adminClient(adminApp)
  await a.customer(urn)
  await a.credit(urn, 10_000)
  const res = await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: JSON.stringify(authBody({ urn })) })
  checkInjected(t, res, { status: 200, code: '05' }, 'shed')
  t.equal(await a.available(urn), '10000', 'nothing debited')
  const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.equal(metricValue(metrics, 'extauth_shed_total{cause="heapUsedBytes"}'), 1, 'counted as shed')
  const live = await publicApp.inject({ method: 'GET', url: '/health/live' })
  t.equal(live.statusCode, 200, 'other routes go on')
})

t.test('one decision log line per decision; the consumer key never logged', async t => {
  const { publicApp, adminApp, logs, rawLogs } = await buildApp(t, { logLevel: 'trace' })
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, 2000)
  const wrongKey = 'WRONG-KEY-7f3a9c'
  const approved = authBody({ urn })
  const decided: Array<[Record<string, unknown>, string, string]> = [
    [approved, '00', 'approved'],
    [approved, '00', 'approved'],
    [authBody({ urn }), '51', 'insufficient_funds'],
    [authBody({ urn: freshUrn() }), '14', 'unknown_urn'],
    [{ ...approved, transactionAmount: '1' }, '05', 'conflict']
  ]
  const before = logs.filter(l => l.msg === 'decision').length
  for (const [body, code] of decided) {
    checkInjected(t, await auth(publicApp, body), { status: 200, code, amount: body.transactionAmount as string })
  }
  // refused calls are not decisions
  await auth(publicApp, authBody({ urn }), { headers: platformHeaders({ 'x-consumer-custom-id': wrongKey }) })
  await auth(publicApp, authBody({ urn }), { headers: platformHeaders({ 'x-consumer-custom-id': undefined }) })
  await auth(publicApp, authBody({ urn, channel: 'FOO' }))
  await auth(publicApp, '{')

  const lines = logs.filter(l => l.msg === 'decision').slice(before)
  t.equal(lines.length, decided.length, 'one decision line per decision, none for refused calls')
  decided.forEach(([body, code, reason], i) => {
    const l = lines[i]
    t.match(l, { reference: body.transactionReferenceNumber, urn: body.urn, code, reason }, `line ${i + 1}: reference, urn, code, reason`)
    t.equal(typeof l?.latencyMs, 'number', `line ${i + 1}: latencyMs`)
    t.ok((l?.latencyMs as number) >= 0)
  })
  t.ok(rawLogs.length > decided.length, 'other lines were written too (refusals)')
  t.notOk(rawLogs.some(l => l.includes(CONSUMER_KEY)), 'the consumer key is in no log line')
  t.notOk(rawLogs.some(l => l.includes(wrongKey)), 'a wrong consumer key sent is in no log line')
})
