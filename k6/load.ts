// Constant-arrival-rate load on POST /api/v1/externalAuth, with the pass/fail limits of scripts/load.ts.
//   k6 run -e BASE_URL=http://127.0.0.1:8080 -e ADMIN_URL=http://127.0.0.1:8081 -e ADMIN_TOKEN=... \
//     -e CONSUMER_KEY=... -e CLIENT_ID=... -e BANK_ID=1234 -e RATE=300 -e DURATION=30s -e URNS=50 k6/load.ts
// setup() creates URNS funded customers and a blocked one through the admin API; see scenario.ts for the mix.
// WARMUP (default 5s, 0 for none) runs the same requests at the same rate first, as the scenario `warmup`: its
// answers count in non_200, http_req_failed and over_deadline, its latency, declines and drops in no threshold.
import http from 'k6/http'
import { check } from 'k6'
import exec from 'k6/execution'
import { Rate, Counter } from 'k6/metrics'
import type { Options } from 'k6/options'
import {
  AUTH_PATH, DEFAULT_CREDIT_MINOR, DEFAULT_LIMITS, DEFAULT_WARMUP_S, durationSeconds, expectedDeclineRatio, newRunId, planRequest,
  platformHeaders, type Scenario
} from './scenario.ts'
import { BASE_URL, env, envNumber, platformKeys, requireKeys, seed } from './common.ts'

const RATE = envNumber('RATE', 200)
const DURATION = env('DURATION', '30s')
const URNS = Math.max(1, envNumber('URNS', 50))
const DECLINE_EVERY = envNumber('DECLINE_EVERY', 10)
const P99_MS = envNumber('P99_MS', DEFAULT_LIMITS.p99Ms)
const BAND = envNumber('DECLINE_BAND', DEFAULT_LIMITS.declineBand)
const DEADLINE_MS = envNumber('DEADLINE_MS', DEFAULT_LIMITS.deadlineMs)
const WARMUP_S = durationSeconds(env('WARMUP', String(DEFAULT_WARMUP_S)))
if (WARMUP_S === null) throw new Error(`WARMUP: "${env('WARMUP', '')}" is not a duration (5, 5s, 1m)`)
// the measured scenario's requests are numbered after every request the warm-up can start
const MEASURED_FROM = Math.ceil(RATE * WARMUP_S) + 1
const expected = DECLINE_EVERY > 0 ? 1 / DECLINE_EVERY : 0

const non200 = new Rate('non_200')
const declined = new Rate('declined')
const overDeadline = new Rate('over_deadline')
const unexpectedCode = new Counter('unexpected_code')

// only 200 is an expected status: a 4xx/5xx counts in http_req_failed too
http.setResponseCallback(http.expectedStatuses(200))

const arrivals = {
  executor: 'constant-arrival-rate',
  rate: RATE,
  timeUnit: '1s',
  preAllocatedVUs: envNumber('PRE_VUS', Math.max(10, Math.ceil(RATE / 10))),
  maxVUs: envNumber('MAX_VUS', Math.max(100, RATE * 2))
} as const

export const options: Options = {
  scenarios: {
    ...(WARMUP_S > 0 ? { warmup: { ...arrivals, duration: `${WARMUP_S}s`, gracefulStop: '5s' } } : {}),
    externalAuth: { ...arrivals, duration: DURATION, startTime: `${WARMUP_S}s`, gracefulStop: '5s' }
  },
  setupTimeout: '120s',
  thresholds: {
    'http_req_duration{scenario:externalAuth}': [`p(99)<${P99_MS}`],
    'http_req_failed{scenario:externalAuth}': ['rate==0'],
    non_200: ['rate==0'],
    over_deadline: ['rate==0'],
    'declined{scenario:externalAuth}': [`rate>=${Math.max(0, expected - BAND)}`, `rate<=${Math.min(1, expected + BAND)}`],
    // the arrival rate was not kept: too few VUs, or the service too slow
    'dropped_iterations{scenario:externalAuth}': ['count==0']
  },
  summaryTrendStats: ['avg', 'med', 'p(90)', 'p(99)', 'max']
}

export function setup (): { scenario: Scenario } {
  requireKeys()
  const scenario: Scenario = {
    runId: newRunId(Date.now(), Math.floor(Math.random() * 37)),
    urns: URNS,
    declineEvery: DECLINE_EVERY,
    creditMinor: envNumber('CREDIT', DEFAULT_CREDIT_MINOR)
  }
  seed(scenario)
  console.log(`run ${scenario.runId}: ${URNS} funded customers; expected decline ratio ${expectedDeclineRatio(scenario).toFixed(3)} ± ${BAND}`)
  return { scenario }
}

const headers = platformHeaders(platformKeys())

export default function (data: { scenario: Scenario }): void {
  const seq = exec.scenario.name === 'warmup' ? exec.scenario.iterationInTest : MEASURED_FROM + exec.scenario.iterationInTest
  const planned = planRequest(data.scenario, seq)
  const res = http.post(`${BASE_URL}${AUTH_PATH}`, JSON.stringify(planned.body), { headers, tags: { name: 'externalAuth' } })
  non200.add(res.status !== 200)
  overDeadline.add(res.timings.duration > DEADLINE_MS)
  let code = ''
  try {
    code = String((res.json() as { responseCode?: unknown }).responseCode ?? '')
  } catch { /* not JSON: counted by non_200 or the check */ }
  declined.add(code !== '00')
  if (code !== planned.expectCode) unexpectedCode.add(1, { expected: planned.expectCode, got: code })
  check(res, {
    'status 200': (r) => r.status === 200,
    'answer has a responseCode': () => /^\d\d$/.test(code)
  })
}
