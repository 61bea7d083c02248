// npm run demo: the simulators and extauth on the embedded store in SETTLEMENT_MODE=holds, all on loopback. A
// card is loaded through the gateway's OTP flow, its cardholder sets card controls in the app while spending,
// then it is spent with the issuer simulator until rules, limits and funds decline; then the day closes
// against the platform's statement (demo-day.ts); every step is printed. It starts once extauth is ready and
// warmed up; a payment shed for overload all the same is printed as such and sent again, and every admin
// answer it prints is checked first.
import { setTimeout as sleep } from 'node:timers/promises'
import { Pool, request } from 'undici'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { createServices } from '../../src/services.js'
import { buildAdminApp, buildPublicApp } from '../../src/app.js'
import { buildGatewaySim } from '../../src/sim/gateway-sim.js'
import { buildPrepaidSim } from '../../src/sim/prepaid-sim.js'
import { buildRiskSim } from '../../src/sim/risk-sim.js'
import { cardholderJourney, createIssuer } from '../../src/sim/issuer.js'
import type { AuthRequest } from '../../src/domain/request.js'
import { closeDay, type DayResult } from './demo-day.js'
import { paymentLine, type Lookup } from './demo-lines.js'

const KEYS = { consumerKey: 'demo-consumer-key', clientId: 'DEMOCLIENT', bankId: '1234' }
const ADMIN_TOKEN = 'demo-admin-token'
const money = (minor: string | number): string => (Number(minor) / 100).toFixed(2)
/** how long the demo waits for readiness; it only ends a wait that would never end */
const READY_WAIT_MS = 60_000
/** decisions made for an unknown customer before the demo starts, so its first payments meet a warm process */
const WARM_UP_PAYMENTS = 20
/** a payment shed for overload is sent again this many times at most */
const SHED_RESENDS_MAX = 3

export interface DemoOptions {
  /** where each line goes; default stdout */
  say?: (s: string) => void
  /** a fault planted in the day's close, for the test that its check can fail */
  plant?: 'drop-refund-line'
}

export interface DemoResult {
  day: DayResult
}

/** Polls the public listener's readiness until it answers 200, saying once what it waits for. */
async function ready (say: (s: string) => void, publicUrl: string, indent = ''): Promise<void> {
  const until = Date.now() + READY_WAIT_MS
  let said = false
  for (;;) {
    const res = await request(`${publicUrl}/health/ready`)
    const body = await res.body.json() as { reasons?: string[] }
    if (res.statusCode === 200) return
    if (Date.now() > until) throw new Error(`extauth not ready after ${READY_WAIT_MS} ms: ${(body.reasons ?? []).join(', ')}`)
    if (!said) say(`${indent}waiting for extauth to be ready (${(body.reasons ?? []).join(', ')})`)
    said = true
    await sleep(100)
  }
}

export async function runDemo (opts: DemoOptions = {}): Promise<DemoResult> {
  const say = opts.say ?? ((s: string): void => { process.stdout.write(`${s}\n`) })
  const dayStartMs = Date.now()
  const run = String(dayStartMs)
  const gateway = buildGatewaySim({ apiKey: 'demo-gw-key', pgInstanceId: 'PG01', merchantId: 'M0001' })
  const prepaid = buildPrepaidSim({ apiKey: 'demo-pp-key', consumerKey: 'demo-pp-consumer', secureCode: 'demo-secure', clientId: 'CL01', bankId: '1234', unloadPath: '/demo/v2/unload' })
  const risk = buildRiskSim({ accessToken: 'demo-risk-token' })
  const [gatewayUrl, prepaidUrl, riskUrl] = await Promise.all([gateway.app, prepaid.app, risk.app].map(async (a) => await a.listen({ host: '127.0.0.1', port: 0 })))

  const config = loadConfig({
    ...process.env,
    EXTAUTH_CONSUMER_KEY: KEYS.consumerKey, EXTAUTH_CLIENT_ID: KEYS.clientId, EXTAUTH_BANK_ID: KEYS.bankId, ADMIN_TOKEN,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', SETTLEMENT_MODE: 'holds', RULES_DIR: process.env.RULES_DIR ?? './rules', RULES_WATCH: 'false', REDIS_URL: '',
    CARD_CONTROLS_FILE: process.env.CARD_CONTROLS_FILE ?? './examples/card-controls.rbi.json',
    GATEWAY_URL: gatewayUrl as string, GATEWAY_API_KEY: 'demo-gw-key', GATEWAY_PG_INSTANCE_ID: 'PG01', GATEWAY_MERCHANT_ID: 'M0001', GATEWAY_VERSION: '1.0.0.1',
    PREPAID_URL: prepaidUrl as string, PREPAID_API_KEY: 'demo-pp-key', PREPAID_CONSUMER_KEY: 'demo-pp-consumer', PREPAID_SECURE_CODE: 'demo-secure', PREPAID_CLIENT_ID: 'CL01', PREPAID_BANK_ID: '1234', PREPAID_UNLOAD_PATH: '/demo/v2/unload',
    RISK_URL: riskUrl as string, RISK_ACCESS_TOKEN: 'demo-risk-token', RISK_INSTANCE_ID: '1001', RISK_CHANNEL_ID: 'DEMO'
  })
  const log = createLogger(config.logLevel)
  const services = await createServices(config, log)
  const publicApp = await buildPublicApp(services)
  const adminApp = await buildAdminApp(services)
  const publicUrl = await publicApp.listen({ host: '127.0.0.1', port: 0 })
  const adminUrl = await adminApp.listen({ host: '127.0.0.1', port: 0 })
  const admin = new Pool(adminUrl)
  const issuer = createIssuer({ url: publicUrl, ...KEYS, connections: 4 })
  try {
    const lookup = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown): Promise<Lookup> => {
      const res = await admin.request({ method, path, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
      return { status: res.statusCode, body: await res.body.json() as Record<string, unknown> }
    }
    /** an admin call whose answer the demo prints: anything but a 2xx stops it, naming the answer */
    const call = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const res = await lookup(method, path, body)
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`)
      return res.body
    }
    const shedSoFar = async (): Promise<number> => (await services.metrics.shed.get()).values.reduce((sum, v) => sum + v.value, 0)
    say(`extauth on ${publicUrl} (admin ${adminUrl}), store: ${services.store.kind}, rules: ${services.rulesManager.current.version}`)
    say(`simulators: gateway ${String(gatewayUrl)}, prepaid ${String(prepaidUrl)}, risk ${String(riskUrl)}`)
    await ready(say, publicUrl)
    for (let i = 0; i < WARM_UP_PAYMENTS; i++) {
      await issuer.send({
        urn: 'DEMO-WARMUP', last4Digits: '0000', terminalId: 'TERM0001', systemTraceAuditNumber: String(i + 1).padStart(6, '0'), cardNetwork: 'RUPAY',
        channel: 'POS', transactionAmount: '100', transactionReferenceNumber: `WARMUP${Date.now()}${i}`, currencyCode: '356', mcc: '5411'
      } as AuthRequest)
    }
    await ready(say, publicUrl)
    say(`extauth ready, warmed up with ${WARM_UP_PAYMENTS} payments of an unknown customer\n`)

    const urn = 'DEMO000001'
    const last4 = '1111'
    say(`1. a customer ${urn} with a card ending ${last4}`)
    await call('PUT', `/admin/v1/customers/${urn}`, { customerId: 'DEMO-CUST' })
    await call('PUT', `/admin/v1/customers/${urn}/cards/${last4}`, { status: 'ACTIVE' })

    const ref = `LOAD${Date.now()}`
    say(`2. load 50,000.00 onto it with a debit card, through the gateway's OTP flow (reference ${ref})`)
    const started = await call('POST', '/v1/loads', { urn, amount: '5000000', merchantReferenceNo: ref, pan: '4111111111111111', expDate: '122030', cvd2: '123', nameOnCard: 'DEMO USER', mobileNumber: '919800000001' })
    say(`   generate OTP → ${String(started.status)} (valid ${String(started.validityPeriodMin)} min)`)
    const wrong = await call('POST', `/v1/loads/${ref}/otp`, { otp: '000000' })
    say(`   a mistyped OTP → ${String(wrong.status)} (${JSON.stringify(wrong.upstream)})`)
    const otp = gateway.lastOtp(ref) as string
    const loaded = await call('POST', `/v1/loads/${ref}/otp`, { otp })
    say(`   the OTP the customer received → ${String(loaded.status)}; available ${money(loaded.available as string)}`)
    const again = await call('POST', `/v1/loads/${ref}/otp`, { otp })
    say(`   the same call again → ${String(again.status)} (replayed: ${String(again.replayed)}), no second credit\n`)

    // the platform keeps the wallet too; in the demo it starts where extauth is after the load
    prepaid.wallets.add({ urn, customerId: 'DEMO-CUST', accountNumber: 'DEMO-WALLET-1', balance: Number(loaded.available) })
    const unloadRef = `UNLOAD${Date.now()}`
    say(`3. withdraw 2,000.00 (fee 10.00) to a bank account: an unload through the prepaid platform (${unloadRef})`)
    const unload = {
      clientTxnId: unloadRef, urn, accountNumber: 'DEMO-WALLET-1', amount: '200000', fee: '1000', receiver: 'DEMO USER',
      sourceType: 1, fundFlowType: 'UNLOAD', implId: 'DEMO-IMPL', implType: 'BANK', beneficiaryId: 1001, customerMobile: '919800000001'
    }
    const unloaded = await call('POST', '/v1/unloads', unload)
    const wallet = await call('GET', `/admin/v1/customers/${urn}`)
    say(`   Encrypt (3450), Unload, Decrypt → ${String(unloaded.status)} (${JSON.stringify(unloaded.upstream)}), ledger ${String(unloaded.ledgerTransactionId)}`)
    say(`   available here ${money(wallet.available as string)}, on the platform ${money(prepaid.wallets.customer(urn)?.balance ?? 0)}`)
    const unloadAgain = await call('POST', '/v1/unloads', unload)
    say(`   the same call again → ${String(unloadAgain.status)} (replayed: ${String(unloadAgain.replayed)}), nothing sent\n`)

    let n = 0
    /** a payment the platform sends and books (its purchase book keeps every answer for the day's close) */
    const spend = async (what: string, over: Partial<AuthRequest>): Promise<{ code: string, body: AuthRequest }> => {
      const body: AuthRequest = {
        urn, last4Digits: last4, terminalId: 'TERM0001', systemTraceAuditNumber: String(++n).padStart(6, '0'), cardNetwork: 'RUPAY',
        channel: 'POS', transactionAmount: '100', transactionReferenceNumber: `DEMO${Date.now()}${n}`, currencyCode: '356', mcc: '5411', ...over
      } as AuthRequest
      for (let sent = 0; ; sent++) {
        const shedBefore = await shedSoFar()
        const out = await issuer.send(body)
        prepaid.purchases.record(body, out)
        if (out.kind !== 'answer') throw new Error(`${what}: no answer from extauth (${out.code})`)
        const answer = out.body as { responseCode: string, responseDescription: string }
        const shed = await shedSoFar() > shedBefore
        const decision = await lookup('GET', `/admin/v1/customers/${body.urn}/decisions/${body.transactionReferenceNumber}`)
        say(paymentLine(what, money(body.transactionAmount), answer, decision, shed))
        // a shed payment left nothing behind: the same one is sent again once extauth is ready, as a later
        // try of the platform's would be
        if (!shed || sent === SHED_RESENDS_MAX) return { code: answer.responseCode, body }
        await ready(say, publicUrl, '   ')
        say('   sent again, extauth being ready')
      }
    }

    say(`4. the cardholder's card controls, set in the app (program defaults: ${config.cardControlsFile})`)
    say(`   the card starts with ${JSON.stringify(await call('GET', `/admin/v1/customers/${urn}/cards/${last4}/controls`))}`)
    for (const step of cardholderJourney({ urn, last4Digits: last4 }, { run: String(Date.now()) })) {
      if (step.kind === 'controls') {
        await call('PATCH', `/admin/v1/customers/${urn}/cards/${last4}/controls`, step.patch)
        say(`   the cardholder ${step.what}: PATCH .../controls ${JSON.stringify(step.patch)}`)
      } else {
        const { transactionReferenceNumber: _ref, systemTraceAuditNumber: _stan, ...over } = step.body
        await spend(step.what, over)
      }
    }

    say('5. spend with the issuer simulator')
    await spend('groceries, POS', { transactionAmount: '245000' })
    await spend('online casino, ECOM (MCC 7995)', { channel: 'ECOM', mcc: '7995', transactionAmount: '100000' })
    say('   cash: ATM withdrawals of 6,000.00 until the daily ATM amount limit (25,000.00)')
    for (let i = 0; i < 6; i++) if ((await spend(`ATM withdrawal ${i + 1}`, { channel: 'ATM', mcc: '6011', transactionAmount: '600000' })).code !== '00') break
    say('   smaller withdrawals until the daily ATM count limit (5 a card)')
    for (let i = 0; i < 4; i++) if ((await spend('ATM withdrawal, small', { channel: 'ATM', mcc: '6011', transactionAmount: '10000' })).code !== '00') break
    say('   POS purchases of 10,000.00 until the funds run out')
    for (let i = 0; i < 6; i++) if ((await spend('electronics, POS', { transactionAmount: '1000000', mcc: '5732' })).code !== '00') break
    say('6. the card is reported lost')
    await call('PUT', `/admin/v1/customers/${urn}/cards/${last4}`, { status: 'LOST' })
    await spend('coffee, POS-Contactless', { channel: 'POS-Contactless', transactionAmount: '25000' })

    const c = await call('GET', `/admin/v1/customers/${urn}`)
    say(`\nfinal: available ${money(c.available as string)}, held ${money(c.held as string)}, cards ${JSON.stringify(c.cards)}\n`)

    const importStatement = async (ndjson: string): Promise<Record<string, unknown>> => {
      const res = await admin.request({ method: 'POST', path: '/admin/v1/statements', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' }, body: ndjson })
      const body = await res.body.json() as Record<string, unknown>
      if (res.statusCode !== 200) throw new Error(`POST /admin/v1/statements answered ${res.statusCode}: ${JSON.stringify(body)}`)
      return body
    }
    const day = await closeDay({
      say, call, importStatement, spend, prepaidUrl: prepaidUrl as string, purchases: prepaid.purchases, wallets: prepaid.wallets, dayStartMs, run,
      ...(opts.plant !== undefined ? { plant: opts.plant } : {})
    })
    return { day }
  } finally {
    await issuer.close()
    await admin.close()
    await publicApp.close()
    await adminApp.close()
    await services.close()
    await Promise.all([gateway.app.close(), prepaid.app.close(), risk.app.close()])
  }
}
