// Every body the admin listener takes (the admin API, card controls, the card lifecycle) is checked as it was
// sent: no coercion (`{"amount": [5]}` is not an amount, `"true"` is not true), no unknown fields. The routes
// are read from the listener itself, so a new route that takes a body is walked too: it fails here until it
// has a valid body below, and each of its fields (read from its schema in the API document) is then sent
// with every JSON type its schema does not accept. Each such call must answer 400 VALIDATION and reach no
// service at all: no store call, no card-lifecycle service, no rule reload, no event resend.
import t from 'tap'
import { Ajv, type ValidateFunction } from 'ajv'
import type { LightMyRequestResponse } from 'fastify'
import { build } from '../helpers/app.js'
import { adminHeaders } from '../helpers/config.js'
import { buildAdminApp, type AppDeps } from '../../src/app.js'
import type { Store } from '../../src/store/types.js'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }
interface Schema { [k: string]: unknown, properties?: Record<string, Schema>, additionalProperties?: boolean | Schema }

/** One body each route takes, with every field its schema names (a route that takes none: `{}`). */
const VALID: Record<string, Record<string, Json>> = {
  'PUT /admin/v1/customers/:urn': { customerId: 'C1', status: 'ACTIVE' },
  'PUT /admin/v1/customers/:urn/cards/:last4': { status: 'ACTIVE' },
  'POST /admin/v1/customers/:urn/credits': { amount: '5', reference: 'r5' },
  'POST /admin/v1/customers/:urn/debits': { amount: '5', reference: 'r5' },
  'POST /admin/v1/customers/:urn/decisions/:ref/reversal': { amount: '5' },
  'POST /admin/v1/rules/reload': {},
  'PATCH /admin/v1/customers/:urn/cards/:last4/controls': Object.fromEntries(['POS', 'ATM', 'ECOM', 'POS-Contactless', 'international']
    .map((k) => [k, { enabled: true, perTransactionMax: 5000, dailyMax: null }])),
  'POST /v1/loads': {
    urn: 'UBODY1', amount: '5000', merchantReferenceNo: 'LOAD-1', pan: '4111111111111111', expDate: '122030', cvd2: '123',
    nameOnCard: 'A Cardholder', mobileNumber: '9999999999', email: 'a@example.com', currencyCode: '356', orderDesc: 'top-up',
    cardHolderStatus: 'NEW', customerIpAddress: '10.0.0.1', browserUserAgent: 'ua', httpAccept: 'text/html', purposeOfAuthentication: 'PA'
  },
  'POST /v1/loads/:ref/otp/resend': { mobileNumber: '9999999999', email: 'a@example.com' },
  'POST /v1/loads/:ref/otp': { otp: '123456' },
  'POST /v1/preauths/:pgTransactionId/capture': { merchantReferenceNo: 'PA-1', amount: '500' },
  'POST /v1/preauths/:pgTransactionId/cancel': { merchantReferenceNo: 'PA-1', amount: '500' },
  'POST /v1/transfers': { clientTxnId: 'TR-1', fromUrn: 'UBODY1', toUrn: 'UBODY2', fromAccountNumber: 'A1', toAccountNumber: 'A2', amount: '500' },
  'POST /v1/unloads': {
    clientTxnId: 'UL-1', urn: 'UBODY1', accountNumber: 'ACC1', amount: '500', fee: '0', receiver: 'R', sourceType: 0, fundFlowType: 'F',
    implId: 'I', implType: 'T', beneficiaryId: 1, customerId: 'C1', customerMobile: '+919999999999', reservedField1: {}, extra: {}
  },
  'POST /v1/risk/analyse': {
    clientTxnRefId: 'RK-1', acctNumber: '4111111111111111', purchaseAmount: '500', txnSourceType: 'ECOM', txnTimestamp: '20261121093015',
    async: false, details: true, partRequest: false, channelId: 'CH', messageType: 'MT', merchantCountryCode: '356', ip: '10.0.0.1',
    cardType: 'DEBIT', userAgent: 'ua', mobileNumber: '9999999999', custom: { k: 'v' }
  },
  'POST /admin/v1/events/failed/:id/resend': {},
  'POST /admin/v1/reconciliation/exceptions/:id/resolve': { action: 'accept', amount: '5', reason: 'checked with the platform' },
  'POST /admin/v1/standin': { on: false, reason: 'Redis maintenance over' }
}
/** routes whose body is a file, not JSON (test/http/settlement.test.ts sends them) */
const FILE_BODIES = ['POST /admin/v1/statements']
/** routes whose valid body reaches a service that is not the store: the answer says it got there */
const REACHED: Record<string, (answer: { error?: string }) => boolean> = {
  'POST /admin/v1/reconciliation/exceptions/:id/resolve': (a) => a.error === 'EXCEPTION_NOT_FOUND',
  // stand-in is not configured in this app: the valid body is read and the route answers that
  'POST /admin/v1/standin': (a) => a.error !== undefined && a.error !== 'VALIDATION'
}

/** A value of each JSON type, made from the valid one where that is what a loose validator would turn back. */
function ofEveryType (v: Json): Json[] {
  const s = typeof v === 'string' ? v : JSON.stringify(v)
  return [[v], { v }, s, /^[0-9]+$/.test(s) ? Number(s) : 5, v === true || v === 'true' ? 'true' : true, 1, null, '']
}

/** The schema of `key` inside an object schema. */
function childSchema (schema: Schema, key: string): Schema | undefined {
  return schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined)
}

/** what probesOf reports through */
interface Checks { ok: (v: unknown, m: string) => unknown, fail: (m: string) => unknown }

interface Probe { label: string, field: string, body: Json }

/** The wrong bodies of a route: each field with each type its schema refuses, an unknown field, a body of another type. */
function probesOf (t: Checks, route: string, valid: Record<string, Json>, schema: Schema, ajv: Ajv): Probe[] {
  const probes: Probe[] = [['an array', [valid]], ['a string', 'x'], ['a number', 5]].map(([label, body]) => ({ label: `the body as ${String(label)}`, field: '', body: body as Json }))
  const walk = (value: Record<string, Json>, s: Schema, path: string[], set: (v: Record<string, Json>) => Json): void => {
    for (const name of Object.keys(s.properties ?? {})) t.ok(Object.hasOwn(value, name), `${route}: the valid body has ${[...path, name].join('.')} (add it above)`)
    if (s.additionalProperties === false) probes.push({ label: `an unknown field in ${path.length === 0 ? 'the body' : path.join('.')}`, field: 'unexpected', body: set({ ...value, unexpected: 'x' }) })
    for (const [name, v] of Object.entries(value)) {
      const cs = childSchema(s, name)
      if (cs === undefined) { t.fail(`${route}: no schema for ${[...path, name].join('.')}`); continue }
      const accepts = ajv.compile(cs)
      for (const wrong of ofEveryType(v)) {
        if (accepts(wrong)) continue
        probes.push({ label: `${[...path, name].join('.')} = ${JSON.stringify(wrong)}`, field: name, body: set({ ...value, [name]: wrong }) })
      }
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        walk(v, cs, [...path, name], (inner) => set({ ...value, [name]: inner }))
      }
    }
  }
  walk(valid, schema, [], (v) => v)
  return probes
}

/** An object every method of which records its call and fails; `then` is left out so it is never taken for a promise. */
function recorder (label: string, calls: string[]): never {
  return new Proxy({}, {
    get: (_target, name) => name === 'then' || typeof name === 'symbol'
      ? undefined
      : (..._args: unknown[]) => { calls.push(`${label}.${name}`); return Promise.reject(new Error(`${label}.${name}: not expected in this test`)) }
  }) as never
}

/** The store, recording every method called through it. */
function recordingStore (store: Store, calls: string[]): Store {
  return new Proxy(store, {
    get: (target, name) => {
      const v = Reflect.get(target, name, target) as unknown
      if (typeof v !== 'function') return v
      return (...args: unknown[]) => { calls.push(`store.${String(name)}`); return (v as (...a: unknown[]) => unknown).apply(target, args) }
    }
  })
}

const urlOf = (pattern: string): string =>
  pattern.replace(':urn', 'UBODY1').replace(':last4', '1234').replace(':pgTransactionId', '42').replace(/:[A-Za-z]+/g, 'R1')

t.test('every admin and card-lifecycle body with a wrong type or an unknown field: 400 VALIDATION, nothing called', async (t) => {
  const built = await build(t)
  const calls: string[] = []
  const deps: AppDeps = {
    ...built.deps,
    store: recordingStore(built.deps.store, calls),
    rules: { ...built.deps.rules, reload: async () => { calls.push('rules.reload'); throw new Error('rules.reload: not expected in this test') } },
    events: recorder('events', calls),
    cardLifecycle: { loads: recorder('loads', calls), transfers: recorder('transfers', calls), unloads: recorder('unloads', calls), preauths: recorder('preauths', calls), risk: recorder('risk', calls) }
  }
  const app = await buildAdminApp(deps)
  t.teardown(async () => { await app.close() })
  const send = async (method: string, url: string, body: Json): Promise<LightMyRequestResponse> =>
    await app.inject({ method: method as 'POST', url, headers: adminHeaders, payload: JSON.stringify(body) })

  const doc = (await app.inject({ method: 'GET', url: '/admin/openapi.json', headers: adminHeaders })).json() as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>> }
  const ajv = new Ajv({ strict: false, coerceTypes: false, allowUnionTypes: true })

  const routes = (app.routeScopes ?? []).filter((r) => !['GET', 'HEAD'].includes(r.method)).map((r) => `${r.method} ${r.url}`).filter((r) => !FILE_BODIES.includes(r))
  t.ok(routes.length >= Object.keys(VALID).length, 'the routes are read from the listener')
  t.same(routes.filter((r) => VALID[r] === undefined), [], 'every route that takes a body has a valid body above')
  let probed = 0
  for (const route of routes) {
    const valid = VALID[route]
    if (valid === undefined) continue
    const [method, pattern] = route.split(' ') as [string, string]
    const schema = doc.paths[pattern.replace(/:([A-Za-z0-9]+)/g, '{$1}')]?.[method.toLowerCase()]?.requestBody?.content['application/json']?.schema
    if (schema === undefined) { t.fail(`${route}: declares no body schema; every body is checked`); continue }
    const validates: ValidateFunction = ajv.compile(schema)
    t.ok(validates(valid), `${route}: the valid body above is valid by the route's own schema`, { errors: validates.errors })
    for (const p of probesOf(t, route, valid, schema, ajv)) {
      calls.length = 0
      const res = await send(method, urlOf(pattern), p.body)
      const answer = res.json() as { error?: string, message?: string }
      t.equal(res.statusCode, 400, `${route}, ${p.label}: 400`)
      t.equal(answer.error, 'VALIDATION', `${route}, ${p.label}: VALIDATION`)
      if (p.field !== '') t.match(answer.message, p.field, `${route}, ${p.label}: the message names the field`)
      t.same(calls, [], `${route}, ${p.label}: nothing called`)
      probed++
    }
  }
  t.ok(probed > 100, `${probed} wrong bodies sent`)

  // the valid bodies pass the validator: every 400 above was for the wrong field alone
  for (const route of routes) {
    const valid = VALID[route]
    if (valid === undefined) continue
    const [method, pattern] = route.split(' ') as [string, string]
    calls.length = 0
    const res = await send(method, urlOf(pattern), valid)
    t.not(res.statusCode, 400, `${route}: the valid body gets past the validator (${res.statusCode} ${res.body.slice(0, 120)})`)
    const reached = REACHED[route]
    if (reached !== undefined) t.ok(reached(res.json()), `${route}: and reaches its service`)
    else t.not(calls.length, 0, `${route}: and reaches a service`)
  }
})

t.test('the loose credit of the report: {"amount": [5], "reference": ["r5"]} credits nothing', async (t) => {
  const { adminApp } = await build(t)
  const put = await adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/UBODY9', headers: adminHeaders, payload: '{}' })
  t.equal(put.statusCode, 200)
  const res = await adminApp.inject({ method: 'POST', url: '/admin/v1/customers/UBODY9/credits', headers: adminHeaders, payload: '{"amount":[5],"reference":["r5"]}' })
  t.match({ status: res.statusCode, body: res.json() }, { status: 400, body: { error: 'VALIDATION', message: /amount/ } })
  const after = await adminApp.inject({ method: 'GET', url: '/admin/v1/customers/UBODY9', headers: { authorization: adminHeaders.authorization } })
  t.equal(after.json().available, '0', 'nothing credited')
})
