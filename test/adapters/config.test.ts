import t from 'tap'
import { adapterOptionsFromEnv } from '../../src/adapters/config.js'

const GATEWAY = {
  GATEWAY_URL: 'https://gw.example.test/pg',
  GATEWAY_API_KEY: 'secret-gw-key',
  GATEWAY_PG_INSTANCE_ID: '9001',
  GATEWAY_MERCHANT_ID: 'MERCH0001',
  GATEWAY_VERSION: '1.0.0.1'
}
const RISK = { RISK_URL: 'http://127.0.0.1:9102', RISK_ACCESS_TOKEN: 'secret-risk', RISK_INSTANCE_ID: '4321', RISK_CHANNEL_ID: 'ECOM01' }
const PREPAID = {
  PREPAID_URL: 'http://127.0.0.1:9103',
  PREPAID_API_KEY: 'k',
  PREPAID_CONSUMER_KEY: 'c',
  PREPAID_SECURE_CODE: 's',
  PREPAID_CLIENT_ID: 'CLIENT01',
  PREPAID_BANK_ID: '1234'
}

t.test('a party is configured when its URL is set', async (t) => {
  t.same(adapterOptionsFromEnv({}), { lifecycleLockTtlMs: 60_000 })
  t.same(adapterOptionsFromEnv({ GATEWAY_API_KEY: 'only-a-key' }), { lifecycleLockTtlMs: 60_000 }, 'no URL, no adapter')
  const all = adapterOptionsFromEnv({ ...GATEWAY, ...RISK, ...PREPAID, PREPAID_ENTITY_ID: '5678', GATEWAY_TIMEOUT_MS: '4000' })
  t.same(all.gateway, {
    baseUrl: 'https://gw.example.test/pg', apiKey: 'secret-gw-key', pgInstanceId: '9001', merchantId: 'MERCH0001', version: '1.0.0.1', totalTimeoutMs: 4000
  })
  t.same(all.risk, { baseUrl: 'http://127.0.0.1:9102', accessToken: 'secret-risk', instanceId: '4321', channelId: 'ECOM01', timeoutMs: 300 },
    'RISK_TIMEOUT_MS defaults to 300')
  t.match(all.prepaid, { baseUrl: 'http://127.0.0.1:9103', consumerKey: 'c', secureCode: 's', clientId: 'CLIENT01', bankId: '1234', entityId: '5678' })
  t.equal(adapterOptionsFromEnv({ ...RISK, RISK_TIMEOUT_MS: '150' }).risk?.timeoutMs, 150)
  t.equal(adapterOptionsFromEnv({ ...GATEWAY, GATEWAY_PREAUTH_CANCEL_ACTION: 'VOID_PREAUTH' }).gateway?.preAuthCancellationAction, 'VOID_PREAUTH')
})

t.test('a bad or missing value names the variable and never echoes it', async (t) => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ ...GATEWAY, GATEWAY_API_KEY: '' }, /^GATEWAY_API_KEY is required when GATEWAY_URL is set/],
    [{ ...GATEWAY, GATEWAY_VERSION: '1.0' }, /^GATEWAY_VERSION /],
    [{ ...GATEWAY, GATEWAY_URL: 'ftp://secret-host' }, /^GATEWAY_URL /],
    [{ ...GATEWAY, GATEWAY_URL: 'not a url secret' }, /^GATEWAY_URL /],
    [{ ...RISK, RISK_INSTANCE_ID: '12' }, /^RISK_INSTANCE_ID /],
    [{ ...RISK, RISK_TIMEOUT_MS: 'fast' }, /^RISK_TIMEOUT_MS /],
    [{ ...RISK, RISK_TIMEOUT_MS: '2000' }, /^RISK_TIMEOUT_MS /],
    [{ ...RISK, RISK_ACCESS_TOKEN: undefined as unknown as string }, /^RISK_ACCESS_TOKEN /],
    [{ ...PREPAID, PREPAID_SECURE_CODE: '' }, /^PREPAID_SECURE_CODE /],
    [{ ...PREPAID, PREPAID_BANK_ID: 'bank' }, /^PREPAID_BANK_ID /],
    [{ ...PREPAID, PREPAID_ENTITY_ID: 'x' }, /^PREPAID_ENTITY_ID /]
  ]
  for (const [env, message] of cases) {
    let caught: unknown
    try {
      adapterOptionsFromEnv(env)
    } catch (err) {
      caught = err
    }
    t.ok(caught instanceof Error, `${String(message)} throws an Error`)
    t.match((caught as Error).message, message)
    t.notMatch((caught as Error).message, /secret/, 'the value is not in the message')
  }
})

t.test('the lifecycle lock must outlive the upstream calls made under it', async (t) => {
  t.equal(adapterOptionsFromEnv({ ...GATEWAY, ...PREPAID }).lifecycleLockTtlMs, 60_000, 'the defaults fit')
  t.equal(adapterOptionsFromEnv({ ...PREPAID, PREPAID_TIMEOUT_MS: '27500' }).lifecycleLockTtlMs, 60_000, '2 × 27500 + 5000 fits exactly')
  t.throws(() => adapterOptionsFromEnv({ ...PREPAID, PREPAID_TIMEOUT_MS: '27501' }), /^LIFECYCLE_LOCK_TTL_MS .*PREPAID_TIMEOUT_MS/)
  t.throws(() => adapterOptionsFromEnv({ ...GATEWAY, LIFECYCLE_LOCK_TTL_MS: '20000' }), /^LIFECYCLE_LOCK_TTL_MS .*GATEWAY_TIMEOUT_MS \(8000 ms\)/,
    'the default gateway limit counts when its variable is unset')
  t.equal(adapterOptionsFromEnv({ ...GATEWAY, GATEWAY_TIMEOUT_MS: '100000', LIFECYCLE_LOCK_TTL_MS: '205000' }).lifecycleLockTtlMs, 205_000)
  t.equal(adapterOptionsFromEnv({ LIFECYCLE_LOCK_TTL_MS: '1000' }).lifecycleLockTtlMs, 1000, 'no party, nothing to outlive')
  t.throws(() => adapterOptionsFromEnv({ LIFECYCLE_LOCK_TTL_MS: 'soon' }), /^LIFECYCLE_LOCK_TTL_MS /)
  t.equal(adapterOptionsFromEnv({ ...PREPAID, PREPAID_UNLOAD_PATH: '/api/v2/unload' }).prepaid?.unloadPath, '/api/v2/unload')
  t.throws(() => adapterOptionsFromEnv({ ...PREPAID, PREPAID_UNLOAD_PATH: 'unload' }), /^PREPAID_UNLOAD_PATH /)
})
