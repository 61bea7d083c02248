// A few requests against a running extauth: one approve, one decline, one wrong header (401).
//   k6 run -e BASE_URL=... -e ADMIN_URL=... -e ADMIN_TOKEN=... -e CONSUMER_KEY=... -e CLIENT_ID=... -e BANK_ID=... k6/smoke.ts
import http from 'k6/http'
import { check } from 'k6'
import type { Options } from 'k6/options'
import { AUTH_PATH, newRunId, planRequest, platformHeaders, unknownUrn, type Scenario } from './scenario.ts'
import { BASE_URL, platformKeys, requireKeys, seed } from './common.ts'

export const options: Options = {
  vus: 1,
  iterations: 1,
  thresholds: { checks: ['rate==1'] }
}

export function setup (): { scenario: Scenario } {
  requireKeys()
  const scenario: Scenario = { runId: newRunId(Date.now(), Math.floor(Math.random() * 37)), urns: 1, declineEvery: 0, creditMinor: 100_000 }
  seed(scenario)
  return { scenario }
}

function codeOf (r: http.RefinedResponse<http.ResponseType | undefined>): string {
  try {
    return String((r.json() as { responseCode?: unknown }).responseCode ?? '')
  } catch {
    return ''
  }
}

export default function (data: { scenario: Scenario }): void {
  const headers = platformHeaders(platformKeys())
  const url = `${BASE_URL}${AUTH_PATH}`

  const approve = http.post(url, JSON.stringify(planRequest(data.scenario, 0).body), { headers })
  check(approve, {
    'approve: 200': (r) => r.status === 200,
    'approve: responseCode 00': (r) => codeOf(r) === '00'
  })

  const unknown = { ...planRequest(data.scenario, 1).body, urn: unknownUrn(data.scenario) }
  const decline = http.post(url, JSON.stringify(unknown), { headers })
  check(decline, {
    'decline: 200': (r) => r.status === 200,
    'decline: responseCode 14 (unknown urn)': (r) => codeOf(r) === '14'
  })

  const wrong = http.post(url, JSON.stringify(planRequest(data.scenario, 2).body), {
    headers: { ...headers, 'x-consumer-custom-id': 'not-the-key' },
    responseCallback: http.expectedStatuses(401)
  })
  check(wrong, {
    'bad header: 401': (r) => r.status === 401,
    'bad header: responseCode 05': (r) => codeOf(r) === '05'
  })
}
