import t from 'tap'
import { GATEWAY_PATHS, PRE_AUTH_COMPLETION_ACTION } from './fixtures/spec.js'
import { buildGatewaySim } from '../../src/sim/gateway-sim.js'
import { CARD, GATEWAY_CREDS, listen } from '../adapters/fixtures/setup.js'
import { del, get, post } from './fixtures/http.js'

const header = { version: GATEWAY_CREDS.version, pgInstanceId: GATEWAY_CREDS.pgInstanceId, 'x-api-key': GATEWAY_CREDS.apiKey }
const generateBody = {
  merchantId: GATEWAY_CREDS.merchantId, pan: CARD.pan, expDate: CARD.expDate, cvd2: CARD.cvd2,
  amount: '1250', currencCode: '356', merchantReferenceNo: 'S-1'
}

t.test('OTP for the customer, over HTTP', async (t) => {
  const sim = buildGatewaySim({ ...GATEWAY_CREDS, otpGenerator: () => '424242' })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())

  const g = await post(url + GATEWAY_PATHS.generateOtp, { header, body: generateBody }, { pgInstanceId: GATEWAY_CREDS.pgInstanceId })
  t.match(g, { status: 200, body: { status: 'success', errorcode: '00', errormsg: '', validityPeriod: '05', pgTransactionId: /^\d{8}$/ } })
  t.same(await get(`${url}/__sim/otp/S-1`), { status: 200, body: { otp: '424242' } })
  t.equal((await get(`${url}/__sim/otp/UNKNOWN`)).status, 404)
  t.equal(sim.transaction('S-1')?.panLast4, '1111')
  t.notOk(JSON.stringify(sim.transaction('S-1')).includes(CARD.pan), 'the simulator keeps no PAN')

  const v = await post(url + GATEWAY_PATHS.verifyOtp, {
    header, body: { pgInstanceId: '9001', merchantId: GATEWAY_CREDS.merchantId, merchantRefernceNo: 'S-1', otp: '424242', pgTransactionId: g.body.pgTransactionId }
  })
  t.match(v.body, { status: 'success', errorcode: '00', authResponseCode: '00', tranCtxId: /\w+/ })
  t.equal(sim.lastOtp('S-1'), undefined, 'a used OTP is gone')
})

t.test('envelope and credentials', async (t) => {
  const sim = buildGatewaySim({ ...GATEWAY_CREDS })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())
  const gen = url + GATEWAY_PATHS.generateOtp
  t.match((await post(gen, { body: generateBody })).body, { status: 'failed', errorcode: '01' }, 'no header')
  t.match((await post(gen, { header: { ...header, 'x-api-key': 'bad' }, body: generateBody })).body, { status: 'failed', errorcode: '406' })
  t.match((await post(gen, { header, body: generateBody }, { pgInstanceId: '0000' })).body, { errorcode: '406' }, 'pgInstanceId HTTP header must agree')
  t.match((await post(gen, { header, body: { ...generateBody, currencCode: undefined, currencyCode: '356' } })).body, { errorcode: '01' },
    'currencCode is the field the gateway reads')
  t.match((await post(gen, { header, body: { ...generateBody, expDate: '2030-12' } })).body, { errorcode: '07' })
  t.match((await post(gen, { header, body: { ...generateBody, amount: '0' } })).body, { errorcode: '13' })

  const capture = { merchantId: GATEWAY_CREDS.merchantId, merchantRefernceNo: 'S-1', pgTransactionId: '1', action: PRE_AUTH_COMPLETION_ACTION, transactionTypeCode: '9001' }
  t.match((await post(url + GATEWAY_PATHS.authorize, { header, body: capture })).body, { pgErrorCode: '406' },
    'pre-auth capture wants the key in header.Authorization')
  t.match((await post(url + GATEWAY_PATHS.authorize, { header: { version: '1.0.0.1', pgInstanceId: '9001', Authorization: GATEWAY_CREDS.apiKey }, body: capture })).body,
    { pgErrorCode: '07' }, 'right key, unknown transaction')
  t.equal((await post(url + GATEWAY_PATHS.authorize, '{"header":')).status, 400, 'not JSON')
})

t.test('the control route: faults and request counts for out-of-process tests', async (t) => {
  const sim = buildGatewaySim({ ...GATEWAY_CREDS })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())
  t.equal((await post(`${url}/__sim/faults`, { route: 'generateOtp', fault: { status: 503, times: 1 } })).status, 204)
  t.match(await post(url + GATEWAY_PATHS.generateOtp, { header, body: generateBody }), { status: 503, body: { error: 'injected fault' } })
  t.match((await post(url + GATEWAY_PATHS.generateOtp, { header, body: generateBody })).body, { status: 'success' })

  t.equal((await post(`${url}/__sim/faults`, { route: '*', fault: { malformed: 'json' } })).status, 204)
  const res = await post(url + GATEWAY_PATHS.verifyOtp, { header, body: {} }).catch((err: Error) => err)
  t.ok(res instanceof SyntaxError, 'a cut-off body')
  t.equal(await del(`${url}/__sim/faults`), 204)
  t.match((await post(url + GATEWAY_PATHS.verifyOtp, { header, body: {} })).body, { errorcode: '01' })

  t.match(await post(`${url}/__sim/faults`, { route: 'nope', fault: {} }), { status: 400, body: { routes: ['authorize', 'generateOtp', 'verifyOtp'] } })
  t.match(await post(`${url}/__sim/faults`, { route: 'authorize', fault: { delayMs: -1 } }), { status: 400, body: { error: /delayMs/ } })
  t.match(await post(`${url}/__sim/faults`, { route: 'authorize', fault: { hang: 'yes' } }), { status: 400 })
  t.same((await get(`${url}/__sim/requests`)).body, { requests: { authorize: 0, generateOtp: 2, verifyOtp: 2 } })
})

t.test('latency injection', async (t) => {
  const sim = buildGatewaySim({ ...GATEWAY_CREDS, faults: { generateOtp: { delayMs: 120, times: 1 } } })
  const url = await listen(sim.app)
  t.teardown(() => sim.app.close())
  const started = performance.now()
  t.match((await post(url + GATEWAY_PATHS.generateOtp, { header, body: generateBody })).body, { status: 'success' })
  t.ok(performance.now() - started >= 100, 'the answer waited')
})

t.test('options are checked', async (t) => {
  t.throws(() => buildGatewaySim({ ...GATEWAY_CREDS, validityPeriodMin: 31 }), /validityPeriodMin/)
  t.throws(() => buildGatewaySim({ ...GATEWAY_CREDS, faults: { authorize: { status: 42 } } }), /status/)
})
