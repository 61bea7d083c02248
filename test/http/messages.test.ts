// Refusals and log lines that say what to do (each one a message a user met and could not act on): what was
// reversed already, what is available, an admin key not recognised, an amount in minor units, a decline code
// chosen by meaning, a currency's ISO 4217 number, a store failure named for what it is, the relay's
// connection down in words. Each is checked on what a user sees: the answer's message, the rule's hint, the
// log line.
import t from 'tap'
import pino from 'pino'
import { Writable } from 'node:stream'
import { build } from '../helpers/app.js'
import { adminHeaders, authBody, platformHeaders } from '../helpers/config.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { validateRuleSet } from '../../src/rules/validate.js'
import { Compensator } from '../../src/decision/compensator.js'
import { ERR_STORE_NOT_DONE } from '../../src/errors.js'
import { relayFailure } from '../../src/events/relay-errors.js'

for (const kind of ['memory', 'redis'] as const) {
  t.test(`${kind}: a refused reversal or debit says what stands in the way`, async (t) => {
    const store: Store = kind === 'memory' ? new MemoryStore() : await sharedRedisStore(t)
    const { publicApp, adminApp } = await build(t, { store })
    const call = async (method: 'PUT' | 'POST', url: string, payload: unknown): Promise<{ status: number, body: Record<string, unknown> }> => {
      const res = await adminApp.inject({ method, url, headers: adminHeaders, payload: payload as object })
      return { status: res.statusCode, body: res.json() }
    }
    const urn = `MSG${kind === 'memory' ? 'M' : 'R'}${String(Date.now() % 1e7)}`
    await call('PUT', `/admin/v1/customers/${urn}`, {})
    await call('PUT', `/admin/v1/customers/${urn}/cards/4321`, { status: 'ACTIVE' })
    await call('POST', `/admin/v1/customers/${urn}/credits`, { amount: '5000', reference: 'seed' })
    const body = authBody({ urn, transactionAmount: '1250' })
    t.equal((await publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: body })).json().responseCode, '00')
    const ref = body.transactionReferenceNumber as string
    t.equal((await call('POST', `/admin/v1/customers/${urn}/decisions/${ref}/reversal`, { amount: '500' })).status, 200)
    const again = await call('POST', `/admin/v1/customers/${urn}/decisions/${ref}/reversal`, {})
    t.match(again, { status: 409, body: { error: 'ALREADY_REVERSED' } })
    t.match(again.body.message, new RegExp(`^${ref} was reversed already: 500 released at \\d{4}-\\d{2}-\\d{2}T[0-9:.]+Z; `), 'what was reversed, and when')
    const debit = await call('POST', `/admin/v1/customers/${urn}/debits`, { amount: '9000', reference: 'too-much' })
    t.match(debit, { status: 409, body: { error: 'INSUFFICIENT_FUNDS', message: 'available is 4250, less than the 9000 asked (minor units)' } }, 'what is available')
  })
}

t.test('an admin key sent and not recognised is told so; none sent is told to send one', async (t) => {
  const { adminApp } = await build(t)
  const wrong = await adminApp.inject({ method: 'GET', url: '/admin/v1/rules', headers: { authorization: 'Bearer not-a-key' } })
  t.match(wrong.json(), { error: 'UNAUTHORIZED', message: /^admin key not recognised/ })
  t.notMatch(wrong.body, /not-a-key/, 'the key is never repeated')
  const none = await adminApp.inject({ method: 'GET', url: '/admin/v1/rules' })
  t.match(none.json(), { error: 'UNAUTHORIZED', message: /^no admin key/ })
})

t.test('an amount with a decimal point is told to be minor units, not three schema branches', async (t) => {
  const { adminApp } = await build(t)
  await adminApp.inject({ method: 'PUT', url: '/admin/v1/customers/MSGAMT', headers: adminHeaders, payload: {} })
  for (const amount of ['12.50', 12.5, [5]]) {
    const res = await adminApp.inject({ method: 'POST', url: '/admin/v1/customers/MSGAMT/credits', headers: adminHeaders, payload: { amount, reference: 'r' } })
    t.match(res.json(), { error: 'VALIDATION', message: 'body/amount must be minor units as a digit string, e.g. 1250 for 12.50 (or a whole number)' }, JSON.stringify(amount))
    t.notMatch(res.body, /anyOf|must be string|must be integer/)
  }
})

function hintsOf (rule: object): string[] {
  const r = validateRuleSet([{ name: 'a.json', text: JSON.stringify({ rules: [{ id: 'x', ...rule }] }) }])
  return (r.ok ? [] : r.errors).map((e) => `${e.reason} | ${e.hint ?? ''}`)
}

t.test('a decline code is suggested by meaning, never by spelling', async (t) => {
  const [h57] = hintsOf({ when: { channel: { eq: 'ECOM' } }, then: { decline: '57' } })
  t.notMatch(h57, /did you mean `51`/, '57 (not permitted) is not 51 (no funds)')
  t.match(h57, /57 \(transaction not permitted to cardholder\) has no code of its own here: 05 DO_NOT_HONOR/)
  t.match(h57, /51 NO_SUFFICIENT_FUNDS/, 'the valid codes with their meanings')
  const [h59] = hintsOf({ when: { channel: { eq: 'ECOM' } }, then: { decline: '59' } })
  t.match(h59, /59 \(suspected fraud\) is answered here as 34 SUSPECTED_FRAUD/)
})

t.test('a currency by its letters is told its ISO 4217 number', async (t) => {
  const [usd] = hintsOf({ when: { currencyCode: { eq: 'USD' } }, then: { decline: '05' } })
  t.match(usd, /ISO 4217 numeric code, a string of digits: USD is "840"/)
  t.notMatch(usd, /quote it/, 'it was quoted')
  const [inList] = hintsOf({ when: { billingCurrency: { in: ['eur'] } }, then: { decline: '05' } })
  t.match(inList, /EUR is "978"/)
  const [number] = hintsOf({ when: { currencyCode: { eq: 356 } }, then: { decline: '05' } })
  t.match(number, /quote it: "356"/, 'a number is still told to be quoted')
})

function logLines (): { log: pino.Logger, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const log = pino(new Writable({ write (chunk: Buffer, _e, cb) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); cb() } }))
  return { log, lines }
}

t.test('a compensation the store fails is not logged as waiting for the store', async (t) => {
  for (const [what, err, level, msg] of [
    ['a plain store error', new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), 50, /^deadline compensation failed in the store/],
    ['the store out of reach', new ERR_STORE_NOT_DONE('redis is reconnecting'), 40, /^deadline compensation waiting for the store$/]
  ] as const) {
    const store = new MemoryStore()
    store.abandon = async () => { throw err }
    const { log, lines } = logLines()
    const c = new Compensator(store, log, undefined, { retryDelayMsMin: 60_000 })
    c.abandon({ urn: 'U', reference: 'R', attempt: '1' } as Parameters<Compensator['abandon']>[0])
    await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    t.match(lines, [{ level, msg, err: err.message }], what)
    await c.drain(0)
  }
})

t.test('the relay\'s Redis connection down is said in words, the library\'s beside them', async (t) => {
  const raw = new Error('Stream isn\'t writeable and enableOfflineQueue options is false')
  t.same(relayFailure(raw), { err: 'the relay\'s Redis connection is down; it reconnects by itself and the next sweep tries again', cause: raw.message })
  t.same(relayFailure(new Error('boom')), { err: 'boom' })
})
