import { loadConfig, type Config } from '../../src/config.js'

export const CONSUMER_KEY = 'test-consumer-key-123'
export const CLIENT_ID = 'client-1'
export const BANK_ID = '1234'
export const ADMIN_TOKEN = 'admin-token-abc'

/**
 * The latest a test's client may get an answer that a timer gives (the deadline guard, an adapter's
 * timeout), counted from sending: the configured time, then as much again plus 500 ms for a busy 2-core
 * machine (a loaded run of the whole suite measured 255 ms past a 300 ms deadline). Derived from the
 * configured time, so that for the short times the tests configure (≤ 400 ms) a timer running on another
 * value (a default such as DECISION_DEADLINE_MS's 1200 ms, the platform's 2000 ms) fails it. A timer never
 * fires early, so a lower bound needs no room.
 */
export function answerDueMs (configuredMs: number): number {
  return 2 * configuredMs + 500
}

/** A valid configuration for tests; `env` overrides or adds variables. */
export function testConfig (env: Record<string, string> = {}): Config {
  return loadConfig({
    EXTAUTH_CONSUMER_KEY: CONSUMER_KEY,
    EXTAUTH_CLIENT_ID: CLIENT_ID,
    EXTAUTH_BANK_ID: BANK_ID,
    ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    RULES_WATCH: 'false',
    RULES_DIR: 'test/fixtures/rules-empty',
    // off unless a test is about overload: inject() loops can starve the event-loop sampler
    SHED_EVENT_LOOP_DELAY_MS: '0',
    ...env
  })
}

/** The platform's headers, right. */
export function platformHeaders (over: Record<string, string | undefined> = {}): Record<string, string> {
  const h: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'x-consumer-custom-id': CONSUMER_KEY,
    clientid: CLIENT_ID,
    bankid: BANK_ID,
    ...over
  }
  return Object.fromEntries(Object.entries(h).filter(([, v]) => v !== undefined)) as Record<string, string>
}

export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }

let seq = 0
/** A valid External Authorization body; each call gets a fresh reference. */
export function authBody (over: Record<string, unknown> = {}): Record<string, unknown> {
  seq++
  return {
    urn: 'URN0001',
    customerId: 'CUST1',
    merchantName: 'Corner Shop',
    terminalId: 'T0001',
    mcc: '5411',
    systemTraceAuditNumber: '162',
    cardNetwork: 'RUPAY',
    channel: 'POS',
    merchantId: 'M0001',
    transactionAmount: '1250',
    transactionReferenceNumber: `REF-${process.pid}-${Date.now()}-${seq}`,
    currencyCode: '356',
    last4Digits: '4321',
    ...over
  }
}
