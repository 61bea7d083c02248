// Card controls over the admin API and in the decision (docs/api/card-controls.md): GET/PATCH semantics, strict
// validation that changes nothing, the defaults file, enforcement with its reasons, the log and the metric.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { adminHeaders } from '../helpers/config.js'
import { STORE_KINDS, adminClient, auth, authBody, buildApp, freshUrn, metricValue } from '../helpers/http-checks.js'
import { MemoryStore } from '../../src/store/memory.js'
import { loadConfig, ConfigError } from '../../src/config.js'
import { testConfig } from '../helpers/config.js'
import { OPEN_CONTROLS } from '../../src/domain/controls.js'

const RBI_FILE = 'examples/card-controls.rbi.json'
const RBI = {
  POS: { enabled: true },
  ATM: { enabled: true },
  ECOM: { enabled: false },
  'POS-Contactless': { enabled: false, perTransactionMax: 500000 },
  international: { enabled: false }
}

const url = (urn: string, last4 = '4321'): string => `/admin/v1/customers/${urn}/cards/${last4}/controls`

async function getControls (app: FastifyInstance, urn: string, last4 = '4321'): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'GET', url: url(urn, last4), headers: adminHeaders })
}
async function patch (app: FastifyInstance, urn: string, body: unknown, last4 = '4321'): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'PATCH', url: url(urn, last4), headers: adminHeaders, payload: typeof body === 'string' ? body : JSON.stringify(body) })
}

async function tempFile (t: { teardown: (fn: () => unknown) => void }, name: string, content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-controls-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const file = join(dir, name)
  await writeFile(file, content)
  return file
}

async function cardholder (adminApp: FastifyInstance, amount = 1_000_000): Promise<string> {
  const a = adminClient(adminApp)
  const urn = freshUrn()
  await a.customer(urn)
  await a.credit(urn, amount)
  await a.card(urn, '4321', 'ACTIVE')
  return urn
}

t.test('the defaults file: the shipped RBI example, and errors naming the file and the entry', async (t) => {
  t.same(testConfig({ CARD_CONTROLS_FILE: RBI_FILE }).cardControlDefaults, RBI)
  t.same(testConfig({}).cardControlDefaults, OPEN_CONTROLS, 'without the file: every kind enabled, no limit')
  const cases: Array<[string, string, RegExp]> = [
    ['unknown kind', '{"Online": {"enabled": true}}', /: Online: is not a control/],
    ['unknown field', '{"ECOM": {"enabled": true, "monthlyMax": 5}}', /: ECOM\.monthlyMax: is not a field/],
    ['negative', '{"ATM": {"dailyMax": -1}}', /: ATM\.dailyMax: must be an integer amount/],
    ['fraction', '{"ATM": {"perTransactionMax": 10.5}}', /: ATM\.perTransactionMax: must be an integer amount/],
    ['string amount', '{"ATM": {"dailyMax": "100"}}', /: ATM\.dailyMax: must be an integer amount/],
    ['enabled as a word', '{"POS": {"enabled": "yes"}}', /: POS\.enabled: must be true or false/],
    ['not JSON', '{"POS": ', /: is not JSON/],
    ['an array', '[]', /: must be an object/]
  ]
  for (const [name, content, re] of cases) {
    const file = await tempFile(t, 'defaults.json', content)
    try {
      loadConfig({ ...process.env, EXTAUTH_CONSUMER_KEY: 'k', EXTAUTH_CLIENT_ID: 'c', EXTAUTH_BANK_ID: '1234', CARD_CONTROLS_FILE: file })
      t.fail(`${name}: accepted`)
    } catch (err) {
      t.ok(err instanceof ConfigError, `${name}: a configuration error`)
      t.equal((err as ConfigError).variable, 'CARD_CONTROLS_FILE')
      t.ok((err as Error).message.includes(file), `${name}: names the file`)
      t.match((err as Error).message, re, `${name}: names the entry (${(err as Error).message})`)
    }
  }
  t.throws(() => testConfig({ CARD_CONTROLS_FILE: '/nonexistent/controls.json' }), { variable: 'CARD_CONTROLS_FILE', message: /\/nonexistent\/controls\.json: cannot be read/ })
})

for (const kind of STORE_KINDS) {
  t.test(`${kind.name}: GET and PATCH: only what is named changes, null removes a limit, the answer is the effective controls`, async (t) => {
    const { adminApp, logs } = await buildApp(t, { store: await kind.make(t), env: { CARD_CONTROLS_FILE: RBI_FILE } })
    const urn = await cardholder(adminApp)
    let res = await getControls(adminApp, urn)
    t.equal(res.statusCode, 200)
    t.same(res.json(), RBI, 'a new card starts with the program defaults')

    res = await patch(adminApp, urn, { ECOM: { enabled: true, dailyMax: 200000 } })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { ...RBI, ECOM: { enabled: true, dailyMax: 200000 } })
    res = await patch(adminApp, urn, { ECOM: { perTransactionMax: 50000 }, 'POS-Contactless': { perTransactionMax: null } })
    t.same(res.json(), { ...RBI, ECOM: { enabled: true, perTransactionMax: 50000, dailyMax: 200000 }, 'POS-Contactless': { enabled: false } }, 'fields not named are kept; null removes the default limit')
    res = await patch(adminApp, urn, { ECOM: { dailyMax: null } })
    t.same(res.json(), { ...RBI, ECOM: { enabled: true, perTransactionMax: 50000 }, 'POS-Contactless': { enabled: false } })
    t.same((await getControls(adminApp, urn)).json(), res.json(), 'GET answers what PATCH answered')

    const changes = logs.filter((l) => l.msg === 'card controls updated')
    t.equal(changes.length, 3, 'every change logged')
    t.match(changes[2], { urn, last4: '4321', before: { ECOM: { dailyMax: 200000 } }, after: { ECOM: { enabled: true, perTransactionMax: 50000 } } })
    t.notOk((changes[2]?.after as Record<string, Record<string, unknown>>).ECOM?.dailyMax, 'the after state has no daily limit')

    t.equal((await getControls(adminApp, freshUrn())).statusCode, 404, 'unknown customer')
    const noCard = await patch(adminApp, urn, { ECOM: { enabled: true } }, '9999')
    t.equal(noCard.statusCode, 404)
    t.match(noCard.json(), { error: 'CARD_NOT_FOUND' })
    t.equal((await adminApp.inject({ method: 'GET', url: url(urn, '12a4'), headers: adminHeaders })).statusCode, 400, 'last4 must be 4 digits')
    t.equal((await adminApp.inject({ method: 'PATCH', url: url(urn), headers: { 'content-type': 'application/json' }, payload: '{}' })).statusCode, 401, 'the bearer token is needed')
  })

  t.test(`${kind.name}: a PATCH with anything wrong is 400 naming the field, and nothing changes`, async (t) => {
    const { adminApp, logs } = await buildApp(t, { store: await kind.make(t), env: { CARD_CONTROLS_FILE: RBI_FILE } })
    const urn = await cardholder(adminApp)
    await patch(adminApp, urn, { ATM: { dailyMax: 100000 } })
    const before = (await getControls(adminApp, urn)).json()
    const bad: Array<[unknown, string]> = [
      [{ ECOM: { enabled: true }, Online: { enabled: true } }, 'Online'],
      [{ ECOM: { enabled: true, weeklyMax: 5 } }, 'ECOM.weeklyMax'],
      [{ ECOM: { enabled: true }, ATM: { dailyMax: -1 } }, 'ATM.dailyMax'],
      [{ ATM: { dailyMax: 100.5 } }, 'ATM.dailyMax'],
      [{ ATM: { perTransactionMax: '5000' } }, 'ATM.perTransactionMax'],
      [{ ATM: { dailyMax: 1e16 } }, 'ATM.dailyMax'],
      [{ ECOM: { enabled: 'yes' } }, 'ECOM.enabled'],
      [{ ECOM: { enabled: null } }, 'ECOM.enabled'],
      [{ ECOM: true }, 'ECOM'],
      [[{ ECOM: { enabled: true } }], ''],
      ['null', ''],
      ['"ECOM"', '']
    ]
    for (const [body, field] of bad) {
      const res = await patch(adminApp, urn, body)
      t.equal(res.statusCode, 400, `${JSON.stringify(body)}: 400`)
      t.match(res.json(), { error: 'VALIDATION', field, message: String }, `${JSON.stringify(body)}: names ${field === '' ? 'the body' : field}`)
      if (field !== '') t.ok(String(res.json().message).startsWith(field), 'the message starts with the field')
    }
    t.equal((await patch(adminApp, urn, '{"ECOM": ')).statusCode, 400, 'bad JSON')
    t.same((await getControls(adminApp, urn)).json(), before, 'nothing changed')
    t.equal(logs.filter((l) => l.msg === 'card controls updated').length, 1, 'only the good change was logged')
  })
}

t.test('a default changed after a card set its own: the card keeps its own fields and takes the new default for the rest', async (t) => {
  const store = new MemoryStore()
  const first = await buildApp(t, { store, env: { CARD_CONTROLS_FILE: RBI_FILE } })
  const urn = await cardholder(first.adminApp)
  await patch(first.adminApp, urn, { ECOM: { enabled: true }, ATM: { dailyMax: 300000 } })
  const file = await tempFile(t, 'defaults.json', JSON.stringify({ ...RBI, ECOM: { enabled: false, dailyMax: 100000 }, ATM: { enabled: false, dailyMax: 900000 }, POS: { enabled: true, perTransactionMax: 700000 } }))
  const second = await buildApp(t, { store, env: { CARD_CONTROLS_FILE: file } })
  t.match((await getControls(second.adminApp, urn)).json(), {
    ECOM: { enabled: true, dailyMax: 100000 },
    ATM: { enabled: false, dailyMax: 300000 },
    POS: { enabled: true, perTransactionMax: 700000 }
  })
  const code = async (): Promise<string> => (await auth(second.publicApp, authBody({ urn, channel: 'ECOM', transactionAmount: '100000' }))).json().responseCode as string
  t.equal(await code(), '00', 'ECOM on by the card, up to the new default daily limit')
  t.equal(await code(), '61', 'and the new default daily limit applies')
})

for (const kind of STORE_KINDS) {
  t.test(`${kind.name}: in the decision: a cardholder turns ECOM on, sets a daily limit, travels abroad with international off then on`, async (t) => {
    const { publicApp, adminApp } = await buildApp(t, { store: await kind.make(t), env: { CARD_CONTROLS_FILE: RBI_FILE } })
    const a = adminClient(adminApp)
    const urn = await cardholder(adminApp, 1_000_000)
    const pay = async (over: Record<string, unknown>): Promise<{ code: string, ref: string }> => {
      const body = authBody({ urn, ...over })
      const res = await auth(publicApp, body)
      t.equal(res.statusCode, 200)
      return { code: res.json().responseCode as string, ref: body.transactionReferenceNumber as string }
    }
    const online = await pay({ channel: 'ECOM', transactionAmount: '5000' })
    t.equal(online.code, '05', 'ECOM is off for a new card')
    t.match(await a.decision(urn, online.ref), { code: '05', reason: 'control_off', control: { kind: 'ECOM', check: 'enabled', debit: 5000 } })
    await patch(adminApp, urn, { ECOM: { enabled: true, dailyMax: 12000 } })
    t.equal((await pay({ channel: 'ECOM', transactionAmount: '5000' })).code, '00')
    t.equal((await pay({ channel: 'ECOM', transactionAmount: '7000' })).code, '00', 'up to the daily limit, equal passes')
    const over = await pay({ channel: 'ECOM', transactionAmount: '1' })
    t.equal(over.code, '61')
    t.match(await a.decision(urn, over.ref), { reason: 'control_limit', control: { kind: 'ECOM', check: 'dailyMax', limit: 12000, totalBefore: 12000, debit: 1 } })
    const abroad = { channel: 'POS', transactionAmount: '2000', currencyCode: '356', billingCurrency: '840', billingAmount: '2500' }
    const first = await pay(abroad)
    t.equal(first.code, '05', 'international is off')
    t.match(await a.decision(urn, first.ref), { reason: 'control_off', control: { kind: 'international', debit: 2500 } })
    t.equal((await pay({ channel: 'POS', transactionAmount: '2000' })).code, '00', 'at home, POS still works')
    await patch(adminApp, urn, { international: { enabled: true } })
    t.equal((await pay(abroad)).code, '00', 'after turning international on')
    t.equal(await a.available(urn), String(1_000_000 - 5000 - 7000 - 2000 - 2500))
    const metrics = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
    t.equal(metricValue(metrics, 'extauth_control_declines_total{control="ECOM",check="enabled"}'), 1)
    t.equal(metricValue(metrics, 'extauth_control_declines_total{control="ECOM",check="dailyMax"}'), 1)
    t.equal(metricValue(metrics, 'extauth_control_declines_total{control="international",check="enabled"}'), 1)
    t.equal(metricValue(metrics, 'extauth_decisions_total{code="05",reason="control_off"}'), 2)
  })
}

t.test('a control turned off after the request arrived, before the store commits, is the one applied', async (t) => {
  const store = new MemoryStore()
  const { publicApp, adminApp } = await buildApp(t, { store })
  const urn = await cardholder(adminApp)
  // the switch lands while the request is on its way to the store: after the pipeline built its input
  const authorize = store.authorize.bind(store)
  store.authorize = async (input) => {
    await store.patchCardControls(urn, '4321', { ECOM: { enabled: false } })
    return await authorize(input)
  }
  const res = await auth(publicApp, authBody({ urn, channel: 'ECOM', transactionAmount: '100' }))
  t.equal(res.json().responseCode, '05')
  t.equal(await adminClient(adminApp).available(urn), '1000000', 'nothing held')
})
