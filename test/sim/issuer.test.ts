import t from 'tap'
import Fastify from 'fastify'
import { CHANNELS, createAuthBodyGenerator, createIssuer, sendExternalAuth } from '../../src/sim/issuer.js'
import { listen } from '../adapters/fixtures/setup.js'

const HEADERS = { consumerKey: 'consumer-key-01', clientId: 'CLIENT01', bankId: '1234', entityId: '5678' }

t.test('bodies follow the External Authorization request, from a seed', async (t) => {
  const next = createAuthBodyGenerator({ seed: 42, crossBorderShare: 0.3, entityId: '5678' })
  const bodies = Array.from({ length: 2000 }, next)
  const again = createAuthBodyGenerator({ seed: 42, crossBorderShare: 0.3, entityId: '5678' })
  t.same(Array.from({ length: 2000 }, again), bodies, 'the same seed gives the same traffic')
  t.not(createAuthBodyGenerator({ seed: 43 })().transactionReferenceNumber, bodies[0]?.transactionReferenceNumber)

  t.equal(new Set(bodies.map((b) => b.transactionReferenceNumber)).size, bodies.length, 'references are unique')
  const channels = new Set<string>()
  for (const b of bodies) {
    channels.add(b.channel)
    const problems: string[] = []
    if (!/^\d{6}$/.test(b.systemTraceAuditNumber)) problems.push('systemTraceAuditNumber')
    if (!(CHANNELS as readonly string[]).includes(b.channel)) problems.push('channel')
    if (!/^[1-9]\d{0,14}$/.test(b.transactionAmount)) problems.push('transactionAmount')
    if (!/^\d{4}$/.test(b.last4Digits)) problems.push('last4Digits')
    if (!/^\d{3}$/.test(b.currencyCode ?? '')) problems.push('currencyCode')
    if (!/^\d{4}$/.test(b.mcc ?? '')) problems.push('mcc')
    if (b.urn.length === 0 || b.urn.length > 20 || b.terminalId.length > 50) problems.push('sizes')
    if (b.channel === 'ATM' && b.mcc !== '6011') problems.push('ATM mcc')
    if ((b.billingAmount === undefined) !== (b.billingCurrency === undefined)) problems.push('billing pair')
    if (b.fee !== undefined && !/^\d+$/.test(b.fee)) problems.push('fee')
    if (b.entityId !== '5678') problems.push('entityId')
    if (problems.length > 0) t.fail(`${b.transactionReferenceNumber}: ${problems.join(', ')}`)
  }
  t.same([...channels].sort(), [...CHANNELS].sort(), 'every channel occurs')
  t.ok(bodies.some((b) => b.billingAmount !== undefined) && bodies.some((b) => b.fee !== undefined), 'fees and cross-border occur')

  const cards = [{ urn: '90000000001', last4Digits: '4242' }]
  const one = createAuthBodyGenerator({ seed: 1, cards, channels: ['ATM'], amountMin: 500, amountMax: 500 })()
  t.match(one, { urn: '90000000001', last4Digits: '4242', channel: 'ATM', transactionAmount: '500' })
  t.throws(() => createAuthBodyGenerator({ amountMin: 10, amountMax: 5 }), /amountMin/)
  t.throws(() => createAuthBodyGenerator({ amountMin: 1.5 }), /amountMin/)
})

t.test('sent with the platform headers to /api/v1/externalAuth', async (t) => {
  const seen: Array<{ url: string, headers: Record<string, unknown>, body: unknown }> = []
  const app = Fastify()
  app.post('/*', async (request) => {
    seen.push({ url: request.url, headers: request.headers, body: request.body })
    return { responseCode: '00', responseDescription: 'TRANSACTION_APPROVED' }
  })
  const url = await listen(app)
  t.teardown(() => app.close())

  const issuer = createIssuer({ url: `${url}/client/`, ...HEADERS })
  t.teardown(() => issuer.close())
  const next = createAuthBodyGenerator({ seed: 7 })
  const body = next()
  const out = await issuer.send(body)
  t.match(out, { kind: 'answer', status: 200, body: { responseCode: '00' } })
  t.equal(seen[0]?.url, '/client/api/v1/externalAuth')
  t.match(seen[0]?.headers, { 'x-consumer-custom-id': 'consumer-key-01', clientid: 'CLIENT01', bankid: '1234', entityid: '5678', 'content-type': 'application/json' })
  t.same(seen[0]?.body, body)

  t.match(await sendExternalAuth({ url, ...HEADERS, entityId: undefined }, next()), { kind: 'answer', status: 200 })
  t.notOk('entityid' in (seen[1]?.headers ?? {}), 'entityId is optional')
  await app.close()
  t.match(await sendExternalAuth({ url, ...HEADERS }, next()), { kind: 'error', code: 'ECONNREFUSED' })
})
