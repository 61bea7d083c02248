import t from 'tap'
import Fastify from 'fastify'
import { createGatewayAdapter, GATEWAY_PATHS, PRE_AUTH_COMPLETION_ACTION } from '../../src/adapters/gateway/adapter.js'
import type { GatewayAdapter, GatewayOptions } from '../../src/adapters/gateway/adapter.js'
import { buildGatewaySim } from '../../src/sim/gateway-sim.js'
import type { GatewaySim, GatewaySimOptions } from '../../src/sim/gateway-sim.js'
import { manualClock } from '../../src/sim/clock.js'
import { CARD, elapsedMs, GATEWAY_CREDS, listen, quietLogger } from './fixtures/setup.js'
import type { Teardown } from './fixtures/setup.js'

interface Rig { sim: GatewaySim, gw: GatewayAdapter, url: string }

async function rig (
  tt: Teardown, simOpts: Partial<GatewaySimOptions> = {}, gwOpts: Partial<GatewayOptions> = {}
): Promise<Rig> {
  const sim = buildGatewaySim({ ...GATEWAY_CREDS, otpGenerator: (mrn) => `${mrn.length}${'0'.repeat(5)}`, ...simOpts })
  const url = await listen(sim.app)
  const gw = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: url, ...gwOpts }, { logger: quietLogger() })
  tt.teardown(async () => {
    await gw.close()
    await sim.app.close()
  })
  return { sim, gw, url }
}

async function otpSent (r: Rig, mrn: string): Promise<string> {
  const g = await r.gw.generateOtp({ ...CARD, merchantReferenceNo: mrn })
  if (g.kind !== 'ok' || g.pgTransactionId === undefined) throw new Error(`generateOtp: ${JSON.stringify(g)}`)
  return g.pgTransactionId
}

async function verified (r: Rig, mrn: string): Promise<string> {
  const pgTransactionId = await otpSent(r, mrn)
  const otp = r.sim.lastOtp(mrn)
  if (otp === undefined) throw new Error('no OTP')
  const v = await r.gw.verifyOtp({ merchantReferenceNo: mrn, pgTransactionId, otp })
  if (v.kind !== 'ok') throw new Error(`verifyOtp: ${JSON.stringify(v)}`)
  return pgTransactionId
}

t.test('the wire: envelope, key placement, HTTP header and the spec spellings', async (t) => {
  const seen: Array<{ url: string, headers: Record<string, unknown>, body: any }> = []
  const app = Fastify()
  app.post('/*', async (request) => {
    seen.push({ url: request.url, headers: request.headers, body: request.body })
    return request.url.includes('authorize')
      ? { transactionId: 1, status: '50020', pgErrorCode: '0' }
      : { status: 'success', errorcode: '00', errormsg: '', pgTransactionId: '1' }
  })
  const url = await listen(app)
  const gw = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: `${url}/pg` }, { logger: quietLogger() })
  t.teardown(async () => { await gw.close(); await app.close() })

  await gw.generateOtp({ ...CARD, merchantReferenceNo: 'W1', nameOnCard: 'A B', httpAccept: '*/*' })
  await gw.resendOtp({ merchantReferenceNo: 'W1' })
  await gw.verifyOtp({ merchantReferenceNo: 'W1', pgTransactionId: '1', otp: '123456' })
  await gw.authorize({ merchantReferenceNo: 'W1', pgTransactionId: '1' })
  await gw.preAuthCompletion({ merchantReferenceNo: 'W1', pgTransactionId: '1', amount: 500 })
  await gw.preAuthCancellation({ merchantReferenceNo: 'W1', pgTransactionId: '1' })

  t.same(seen.map((s) => s.url), [
    `/pg${GATEWAY_PATHS.generateOtp}`, `/pg${GATEWAY_PATHS.generateOtp}`, `/pg${GATEWAY_PATHS.verifyOtp}`,
    `/pg${GATEWAY_PATHS.authorize}`, `/pg${GATEWAY_PATHS.authorize}`, `/pg${GATEWAY_PATHS.authorize}`
  ])
  for (const s of seen) {
    t.equal(s.headers.pginstanceid, GATEWAY_CREDS.pgInstanceId, 'pgInstanceId HTTP header')
    t.equal(s.body.header.version, GATEWAY_CREDS.version)
    t.equal(s.body.header.pgInstanceId, GATEWAY_CREDS.pgInstanceId)
  }
  const [gen, resend, verify, auth, complete, cancel] = seen.map((s) => s.body)
  t.equal(gen.header['x-api-key'], GATEWAY_CREDS.apiKey)
  t.notOk('Authorization' in gen.header)
  t.match(gen.body, { merchantId: 'MERCH0001', pan: CARD.pan, expDate: CARD.expDate, cvd2: CARD.cvd2, currencCode: '356', amount: '125000', merchantReferenceNo: 'W1', nameOnCard: 'A B', http_accept: '*/*' })
  t.notOk('currencyCode' in gen.body, 'currencCode, as the spec spells it')
  t.same(resend.body, { merchantId: 'MERCH0001', merchantReferenceNo: 'W1' }, 'resend sends fewer fields, no card data')
  t.same(verify.body, { pgInstanceId: '9001', merchantId: 'MERCH0001', merchantRefernceNo: 'W1', otp: '123456', pgTransactionId: '1' })
  t.same(auth.body, { pgInstanceId: '9001', merchantId: 'MERCH0001', merchantRefernceNo: 'W1', pgTransactionId: '1' })
  t.equal(auth.header['x-api-key'], GATEWAY_CREDS.apiKey)
  t.equal(complete.header.Authorization, GATEWAY_CREDS.apiKey, 'pre-auth capture carries the key as Authorization')
  t.notOk('x-api-key' in complete.header)
  t.same(complete.body, { merchantId: 'MERCH0001', merchantRefernceNo: 'W1', pgTransactionId: '1', action: PRE_AUTH_COMPLETION_ACTION, transactionTypeCode: '9001', amount: '500' })
  t.equal(cancel.body.action, 'SERVICE_POST_MPI_PRE_AUTH_CANCELLATION')
  t.equal(cancel.header.Authorization, GATEWAY_CREDS.apiKey)
})

t.test('generate, verify, authorize: approved with approval code and RRN', async (t) => {
  const r = await rig(t)
  const pgTransactionId = await otpSent(r, 'LOAD-1')
  t.match(pgTransactionId, /^\d{1,8}$/)
  const otp = r.sim.lastOtp('LOAD-1')
  t.ok(otp)
  const v = await r.gw.verifyOtp({ merchantReferenceNo: 'LOAD-1', pgTransactionId, otp: otp ?? '' })
  t.match(v, { kind: 'ok', pgTransactionId, authResponseCode: '00' })
  const a = await r.gw.authorize({ merchantReferenceNo: 'LOAD-1', pgTransactionId })
  t.match(a, { kind: 'ok', transactionId: pgTransactionId, status: '50020', creditDebitCardFlag: 'P' })
  if (a.kind !== 'ok') return
  t.match(a.approvalCode, /^\d{6}$/)
  t.match(a.rrn, /^\d{15}$/)
})

t.test('OTP declines: invalid, expired, attempts exhausted, resend exhausted, replaced by a newer one', async (t) => {
  const clock = manualClock()
  const r = await rig(t, { now: clock.now, validityPeriodMin: 5, verifyMax: 2, resendMax: 2, otpGenerator: (() => { let n = 100000; return () => String(n++) })() })

  const id1 = await otpSent(r, 'OTP-1')
  const wrong = await r.gw.verifyOtp({ merchantReferenceNo: 'OTP-1', pgTransactionId: id1, otp: '999999' })
  t.match(wrong, { kind: 'declined', code: '450', family: 'otp_invalid', retryable: false })

  const id2 = await otpSent(r, 'OTP-2')
  const otp2 = r.sim.lastOtp('OTP-2') ?? ''
  clock.advance(5 * 60_000)
  t.match(await r.gw.verifyOtp({ merchantReferenceNo: 'OTP-2', pgTransactionId: id2, otp: otp2 }),
    { kind: 'declined', code: '451', family: 'otp_expired' }, 'expired after validityPeriod minutes')
  const fresh = await r.gw.resendOtp({ merchantReferenceNo: 'OTP-2' })
  t.match(fresh, { kind: 'ok', validityPeriodMin: 5 })
  const otp2b = r.sim.lastOtp('OTP-2') ?? ''
  t.not(otp2b, otp2)
  t.match(await r.gw.verifyOtp({ merchantReferenceNo: 'OTP-2', pgTransactionId: id2, otp: otp2 }),
    { kind: 'declined', code: '450' }, 'the earlier OTP is invalid once a newer one is issued')
  t.match(await r.gw.verifyOtp({ merchantReferenceNo: 'OTP-2', pgTransactionId: id2, otp: otp2b }), { kind: 'ok' })

  const id3 = await otpSent(r, 'OTP-3')
  for (let i = 0; i < 2; i++) await r.gw.verifyOtp({ merchantReferenceNo: 'OTP-3', pgTransactionId: id3, otp: '000001' })
  t.match(await r.gw.verifyOtp({ merchantReferenceNo: 'OTP-3', pgTransactionId: id3, otp: r.sim.lastOtp('OTP-3') ?? '' }),
    { kind: 'declined', code: '452', family: 'otp_exhausted' }, 'even the right OTP after the attempts are used up')

  await otpSent(r, 'OTP-4')
  t.match(await r.gw.resendOtp({ merchantReferenceNo: 'OTP-4' }), { kind: 'ok' })
  t.match(await r.gw.resendOtp({ merchantReferenceNo: 'OTP-4' }), { kind: 'ok' })
  t.match(await r.gw.resendOtp({ merchantReferenceNo: 'OTP-4' }), { kind: 'declined', code: '453', family: 'otp_resend_exhausted' })

  t.match(await r.gw.generateOtp({ ...CARD, pan: '5555555555554444', merchantReferenceNo: 'OTP-4' }),
    { kind: 'declined', code: '454', family: 'invalid_request' }, 'a reference reused for another card')
})

t.test('authorize declines: not authenticated, issuer, duplicate, credentials', async (t) => {
  const r = await rig(t, { issuer: (v) => v.amount > 1_000_000 ? '51' : v.amount === 91 ? '91' : '00' })

  const early = await otpSent(r, 'AUTH-0')
  t.match(await r.gw.authorize({ merchantReferenceNo: 'AUTH-0', pgTransactionId: early }),
    { kind: 'declined', code: '409', family: 'authentication' }, 'no verified OTP yet')

  const big = await r.gw.generateOtp({ ...CARD, amount: 2_000_000, merchantReferenceNo: 'AUTH-1' })
  if (big.kind !== 'ok' || big.pgTransactionId === undefined) throw new Error('generate')
  await r.gw.verifyOtp({ merchantReferenceNo: 'AUTH-1', pgTransactionId: big.pgTransactionId, otp: r.sim.lastOtp('AUTH-1') ?? '' })
  const nsf = await r.gw.authorize({ merchantReferenceNo: 'AUTH-1', pgTransactionId: big.pgTransactionId })
  t.match(nsf, { kind: 'declined', code: '51', description: 'NON SUFFICIENT FUNDS', family: 'issuer_declined' })
  t.not((nsf as { status?: string }).status, '50020')
  t.match(await r.gw.authorize({ merchantReferenceNo: 'AUTH-1', pgTransactionId: big.pgTransactionId }),
    { kind: 'declined', code: '96', family: 'duplicate', previously: 'declined' })

  const slow = await r.gw.generateOtp({ ...CARD, amount: 91, merchantReferenceNo: 'AUTH-9' })
  if (slow.kind !== 'ok' || slow.pgTransactionId === undefined) throw new Error('generate')
  await r.gw.verifyOtp({ merchantReferenceNo: 'AUTH-9', pgTransactionId: slow.pgTransactionId, otp: r.sim.lastOtp('AUTH-9') ?? '' })
  t.match(await r.gw.authorize({ merchantReferenceNo: 'AUTH-9', pgTransactionId: slow.pgTransactionId }),
    { kind: 'declined', code: '91', family: 'system', retryable: true }, 'the issuer did not answer the network in time')

  const id = await verified(r, 'AUTH-2')
  t.match(await r.gw.authorize({ merchantReferenceNo: 'AUTH-2', pgTransactionId: id }), { kind: 'ok' })
  t.match(await r.gw.authorize({ merchantReferenceNo: 'AUTH-2', pgTransactionId: id }),
    { kind: 'declined', code: '96', description: 'PREVIOUSLY AUTHORIZED', family: 'duplicate', previously: 'authorized' })

  const bad = createGatewayAdapter({ ...GATEWAY_CREDS, apiKey: 'wrong', baseUrl: r.url }, { logger: quietLogger() })
  t.teardown(() => bad.close())
  t.match(await bad.authorize({ merchantReferenceNo: 'AUTH-2', pgTransactionId: id }), { kind: 'declined', code: '406', family: 'credentials' })
  t.match(await bad.generateOtp({ ...CARD, merchantReferenceNo: 'AUTH-3' }), { kind: 'declined', code: '406', family: 'credentials' })
})

t.test('pre-auth completion and cancellation', async (t) => {
  const r = await rig(t)
  const a = await verified(r, 'PRE-1')
  await r.gw.authorize({ merchantReferenceNo: 'PRE-1', pgTransactionId: a })
  t.match(await r.gw.preAuthCompletion({ merchantReferenceNo: 'PRE-1', pgTransactionId: a, amount: CARD.amount + 1 }),
    { kind: 'declined', code: '13' }, 'more than was authorized')
  const done = await r.gw.preAuthCompletion({ merchantReferenceNo: 'PRE-1', pgTransactionId: a, amount: 100_000 })
  t.match(done, { kind: 'ok', transactionId: a })
  t.equal(r.sim.transaction('PRE-1')?.capturedAmount, 100_000)
  t.match(await r.gw.preAuthCompletion({ merchantReferenceNo: 'PRE-1', pgTransactionId: a }), { kind: 'declined', code: '96', previously: 'authorized' })
  t.match(await r.gw.preAuthCancellation({ merchantReferenceNo: 'PRE-1', pgTransactionId: a }), { kind: 'declined', code: '02' })

  const b = await verified(r, 'PRE-2')
  t.match(await r.gw.preAuthCancellation({ merchantReferenceNo: 'PRE-2', pgTransactionId: b }), { kind: 'declined', code: '02' }, 'nothing authorized yet')
  await r.gw.authorize({ merchantReferenceNo: 'PRE-2', pgTransactionId: b })
  t.match(await r.gw.preAuthCancellation({ merchantReferenceNo: 'PRE-2', pgTransactionId: b }), { kind: 'ok' })
  t.equal(r.sim.transaction('PRE-2')?.capture, 'cancelled')
})

t.test('pre-auth capture answered in the OTP shape, and a configured cancellation action', async (t) => {
  const r = await rig(t, { captureAnswerShape: 'otp', preAuthCancellationAction: 'VOID_PREAUTH' }, { preAuthCancellationAction: 'VOID_PREAUTH' })
  const a = await verified(r, 'PRE-3')
  await r.gw.authorize({ merchantReferenceNo: 'PRE-3', pgTransactionId: a })
  t.match(await r.gw.preAuthCancellation({ merchantReferenceNo: 'PRE-3', pgTransactionId: a }), { kind: 'ok', transactionId: a, status: 'success' })

  const other = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: r.url }, { logger: quietLogger() })
  t.teardown(() => other.close())
  const b = await verified(r, 'PRE-4')
  await r.gw.authorize({ merchantReferenceNo: 'PRE-4', pgTransactionId: b })
  t.match(await other.preAuthCancellation({ merchantReferenceNo: 'PRE-4', pgTransactionId: b }),
    { kind: 'declined', code: '02', status: 'failed' }, 'an action the gateway does not know')
})

t.test('a hung gateway: failed/timeout within the configured limit', async (t) => {
  const r = await rig(t, { faults: { verifyOtp: { hang: true } } })
  const id = await otpSent(r, 'HANG-1')
  const quick = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: r.url, headersTimeoutMs: 150 }, { logger: quietLogger() })
  t.teardown(() => quick.close())
  const started = performance.now()
  const v = await quick.verifyOtp({ merchantReferenceNo: 'HANG-1', pgTransactionId: id, otp: '100000' })
  t.match(v, { kind: 'failed', reason: 'timeout', retryable: true, sent: true, attempts: 1, detail: 'UND_ERR_HEADERS_TIMEOUT' })
  t.ok(elapsedMs(started) < 2000, 'ends near headersTimeoutMs, far below the default limits')

  const started2 = performance.now()
  const b = await r.gw.verifyOtp({ merchantReferenceNo: 'HANG-1', pgTransactionId: id, otp: '100000' }, { budgetMs: 100 })
  t.match(b, { kind: 'failed', reason: 'timeout', retryable: true })
  t.ok(elapsedMs(started2) < 1500, "the caller's remaining budget bounds the call")

  const ac = new AbortController()
  const pending = r.gw.verifyOtp({ merchantReferenceNo: 'HANG-1', pgTransactionId: id, otp: '100000' }, { signal: ac.signal })
  setImmediate(() => ac.abort())
  t.match(await pending, { kind: 'failed', reason: 'timeout', detail: 'aborted by caller' })

  t.match(await r.gw.verifyOtp({ merchantReferenceNo: 'HANG-1', pgTransactionId: id, otp: '100000' }, { budgetMs: 0 }),
    { kind: 'failed', reason: 'timeout', sent: false, attempts: 0 }, 'no budget: nothing is sent')
})

t.test('malformed and error answers', async (t) => {
  const r = await rig(t)
  r.sim.faults.set('generateOtp', { malformed: 'json', times: 1 })
  t.match(await r.gw.generateOtp({ ...CARD, merchantReferenceNo: 'M-1' }), { kind: 'failed', reason: 'malformed', retryable: true, sent: true })
  r.sim.faults.set('generateOtp', { malformed: 'schema', times: 1 })
  t.match(await r.gw.generateOtp({ ...CARD, merchantReferenceNo: 'M-1' }), { kind: 'failed', reason: 'malformed' })
  r.sim.faults.set('generateOtp', { status: 503, times: 1 })
  t.match(await r.gw.generateOtp({ ...CARD, merchantReferenceNo: 'M-1' }), { kind: 'failed', reason: 'http_status', httpStatus: 503, retryable: true })
  t.match(await r.gw.generateOtp({ ...CARD, merchantReferenceNo: 'M-1' }), { kind: 'ok' }, 'faults with times clear themselves')

  const small = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: r.url, responseBytesMax: 40 }, { logger: quietLogger() })
  t.teardown(() => small.close())
  t.match(await small.resendOtp({ merchantReferenceNo: 'M-1' }), { kind: 'failed', reason: 'malformed', detail: 'answer over 40 bytes' },
    'an answer larger than responseBytesMax is not buffered')
})

t.test('a POST that was sent is not repeated; the party may have acted on it', async (t) => {
  const r = await rig(t)
  const id = await verified(r, 'SENT-1')
  r.sim.faults.set('authorize', { hang: true, phase: 'after', times: 1 })
  const lost = await r.gw.authorize({ merchantReferenceNo: 'SENT-1', pgTransactionId: id }, { budgetMs: 200 })
  t.match(lost, { kind: 'failed', reason: 'timeout', sent: true, attempts: 1 })
  t.equal(r.sim.faults.count('authorize'), 1, 'one request reached the gateway')
  t.match(await r.gw.authorize({ merchantReferenceNo: 'SENT-1', pgTransactionId: id }),
    { kind: 'declined', code: '96', previously: 'authorized' }, 'the lost answer was an approval; asking again tells so')

  r.sim.faults.set('authorize', { reset: true, times: 1 })
  const cut = await r.gw.authorize({ merchantReferenceNo: 'SENT-1', pgTransactionId: id })
  t.match(cut, { kind: 'failed', reason: 'transport', sent: true, attempts: 1 })
  t.equal(r.sim.faults.count('authorize'), 3, 'the cut request was not repeated')
})

t.test('a connection that cannot be made is retried, then reported unsent', async (t) => {
  const sim = buildGatewaySim({ ...GATEWAY_CREDS })
  const url = await listen(sim.app)
  await sim.app.close()
  const gw = createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: url, connectRetriesMax: 2 }, { logger: quietLogger() })
  t.teardown(() => gw.close())
  const res = await gw.authorize({ merchantReferenceNo: 'X', pgTransactionId: '1' })
  t.match(res, { kind: 'failed', reason: 'transport', sent: false, retryable: true, attempts: 3, detail: 'ECONNREFUSED' })
})

t.test('bad input is a typed error and nothing is sent', async (t) => {
  const r = await rig(t)
  await t.rejects(r.gw.generateOtp({ ...CARD, amount: 12.5, merchantReferenceNo: 'B-1' }), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST', statusCode: 400 })
  await t.rejects(r.gw.generateOtp({ ...CARD, expDate: '2030-12', merchantReferenceNo: 'B-1' }), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST' })
  const err: unknown = await r.gw.verifyOtp({ merchantReferenceNo: 'B-1', pgTransactionId: '', otp: '1' }).catch((e: unknown) => e)
  t.match(err, { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST', problems: ['pgTransactionId is required', 'otp must be 4 to 8 digits'] }, 'every problem named, no value echoed')
  t.equal(r.sim.faults.count('generateOtp') + r.sim.faults.count('verifyOtp'), 0)
  t.throws(() => createGatewayAdapter({ ...GATEWAY_CREDS, version: '1.0', baseUrl: r.url }, { logger: quietLogger() }), { code: 'EXTAUTH_ERR_ADAPTER_OPTION' })
  t.throws(() => createGatewayAdapter({ ...GATEWAY_CREDS, baseUrl: r.url, headersTimeoutMs: 0 }, { logger: quietLogger() }), { code: 'EXTAUTH_ERR_ADAPTER_OPTION' })
})
