// The metrics the dashboard and alerts read: labelled counters present at zero before anything happened,
// the running rule set and refused reloads, Redis up and readiness, and per-party adapter calls.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { createRiskAdapter } from '../src/adapters/risk/adapter.js'
import { ADAPTER_CALLS, type AdapterCall } from '../src/adapters/transport/options.js'
import { createMetrics, FIXED_DECISION_CODES, noteAdapterCalls, observeAdapterCall, watchHealth } from '../src/metrics.js'
import type { PipelineReason } from '../src/decision/pipeline.js'
import { build } from './helpers/app.js'
import { metricValue, rulesDir } from './helpers/http-checks.js'
import { sharedRedisStore } from './helpers/redis.js'
import { quietLogger, RISK_CREDS } from './adapters/fixtures/setup.js'

const RULES = JSON.stringify({
  rules: [
    { id: 'block-gambling', when: { mcc: { in: ['7995'] } }, then: { decline: '05' } },
    { id: 'atm-count', when: { channel: { eq: 'ATM' } }, limit: { measure: 'count', per: 'card', window: 'day', max: 3 }, then: { decline: '65' } },
    { id: 'watch', mode: 'shadow', when: { mcc: { eq: '6051' } }, then: { decline: '05' } }
  ]
})

t.test('every decision reason has its fixed code or is a rule/limit reason', async t => {
  // compile-time: a new reason must be added to the table (or to this list of reasons without a fixed code)
  const all: Record<Exclude<PipelineReason, 'rule' | 'limit'>, string> = FIXED_DECISION_CODES as Record<Exclude<PipelineReason, 'rule' | 'limit'>, string>
  t.equal(Object.keys(all).length, Object.keys(FIXED_DECISION_CODES).length)
})

t.test('labelled counters start at zero; the rule set is described', async t => {
  const dir = await rulesDir(t, { '10-a.json': RULES })
  const { adminApp, deps } = await build(t, { env: { RULES_DIR: dir } })
  const text = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  const zero = [
    'extauth_decisions_total{code="00",reason="approved"}',
    'extauth_decisions_total{code="51",reason="insufficient_funds"}',
    'extauth_decisions_total{code="05",reason="deadline"}',
    'extauth_decisions_total{code="05",reason="store_error"}',
    'extauth_decisions_total{code="05",reason="rule"}',
    'extauth_decisions_total{code="65",reason="limit"}',
    'extauth_store_errors_total{op="authorize"}',
    'extauth_shed_total{cause="eventLoopDelay"}',
    'extauth_shed_total{cause="heapUsedBytes"}',
    'extauth_compensations_total{outcome="released"}',
    'extauth_compensations_total{outcome="tombstoned"}',
    'extauth_rejected_requests_total{status="401"}',
    'extauth_rule_hits_total{rule="block-gambling",mode="enforce"}',
    'extauth_rule_hits_total{rule="atm-count",mode="enforce"}',
    'extauth_rule_hits_total{rule="watch",mode="shadow"}',
    'extauth_rules_reload_failures_total',
    'extauth_deadline_hits_total'
  ]
  for (const s of zero) t.equal(metricValue(text, s), 0, s)
  t.equal(metricValue(text, 'extauth_decisions_total{code="05",reason="limit"}'), null, 'no series for a code no limit answers')
  const version = deps.rules.current().version
  const loadedAt = new Date(deps.rules.loadedAt() as number).toISOString()
  t.equal(metricValue(text, `extauth_rules_info{version="${version}",loaded_at="${loadedAt}"}`), 1)
  t.equal(metricValue(text, 'extauth_ready'), 1)
  t.equal(metricValue(text, 'extauth_redis_up'), null, 'no Redis gauge on the embedded store')
})

t.test('a refused reload is counted and the running set stays in extauth_rules_info', async t => {
  const dir = await rulesDir(t, { '10-a.json': RULES })
  const { adminApp, deps } = await build(t, { env: { RULES_DIR: dir } })
  const before = deps.rules.current().version
  await writeFile(join(dir, '10-a.json'), '{"rules": [')
  t.equal((await deps.rules.reload()).ok, false)
  let text = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  t.equal(metricValue(text, 'extauth_rules_reload_failures_total'), 1)
  t.match(text, new RegExp(`extauth_rules_info\\{version="${before}",loaded_at="[^"]+"\\} 1`))
  await writeFile(join(dir, '10-a.json'), JSON.stringify({ rules: [{ id: 'only', when: { mcc: { eq: '7995' } }, then: { decline: '05' } }] }))
  t.equal((await deps.rules.reload()).ok, true)
  text = (await adminApp.inject({ method: 'GET', url: '/metrics' })).body
  const after = deps.rules.current().version
  t.not(after, before)
  t.equal(text.split('\n').filter(l => l.startsWith('extauth_rules_info{')).length, 1, 'one info series: the running set')
  t.match(text, new RegExp(`extauth_rules_info\\{version="${after}",`))
})

t.test('extauth_redis_up follows the Redis store', async t => {
  const store = await sharedRedisStore(t)
  const m = createMetrics({ defaultMetrics: false })
  let ready = true
  watchHealth(m, { redisUp: () => store.ready() && ready, ready: () => ready })
  let text = await m.registry.metrics()
  t.equal(metricValue(text, 'extauth_redis_up'), 1)
  t.equal(metricValue(text, 'extauth_ready'), 1)
  ready = false
  text = await m.registry.metrics()
  t.equal(metricValue(text, 'extauth_redis_up'), 0)
  t.equal(metricValue(text, 'extauth_ready'), 0)
})

t.test('adapter calls by party, call and outcome, with their time', async t => {
  const m = createMetrics({ defaultMetrics: false })
  noteAdapterCalls(m, 'risk', ADAPTER_CALLS.risk)
  let text = await m.registry.metrics()
  for (const outcome of ['ok', 'declined', 'failed']) t.equal(metricValue(text, `extauth_adapter_calls_total{party="risk",call="analyse",outcome="${outcome}"}`), 0)
  const seen: AdapterCall[] = []
  // nothing listens on port 1 of loopback: the call fails to connect
  const risk = createRiskAdapter({ ...RISK_CREDS, baseUrl: 'http://127.0.0.1:1', timeoutMs: 5000, connectRetriesMax: 0 }, {
    logger: quietLogger(),
    onCall: (c) => { seen.push(c); observeAdapterCall(m, c) }
  })
  t.teardown(async () => { await risk.close() })
  const r = await risk.analyse({ clientTxnRefId: 'REF-1', acctNumber: '90000000001', txnSourceType: 'CARD', purchaseAmount: 100 })
  t.equal(r.kind, 'failed')
  t.same(seen.map(c => [c.party, c.call, c.outcome]), [['risk', 'analyse', 'failed']])
  t.ok((seen[0]?.seconds ?? -1) >= 0)
  text = await m.registry.metrics()
  t.equal(metricValue(text, 'extauth_adapter_calls_total{party="risk",call="analyse",outcome="failed"}'), 1)
  t.equal(metricValue(text, 'extauth_adapter_call_duration_seconds_count{party="risk",call="analyse"}'), 1)
})
