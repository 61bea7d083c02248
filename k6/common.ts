// What k6/load.ts and k6/smoke.ts share: configuration from __ENV and seeding through the admin API.
import http from 'k6/http'
import { fail } from 'k6'
import { seedPlan, type AdminCall, type PlatformKeys, type Scenario } from './scenario.ts'

export function env (name: string, fallback: string): string {
  const v = __ENV[name]
  return v === undefined || v === '' ? fallback : v
}

export function envNumber (name: string, fallback: number): number {
  const raw = env(name, String(fallback))
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}: "${raw}" is not a number`)
  return n
}

export const BASE_URL = env('BASE_URL', 'http://127.0.0.1:8080')
export const ADMIN_URL = env('ADMIN_URL', 'http://127.0.0.1:8081')

export function platformKeys (): PlatformKeys {
  return {
    consumerKey: env('CONSUMER_KEY', ''),
    clientId: env('CLIENT_ID', ''),
    bankId: env('BANK_ID', '')
  }
}

export function requireKeys (): void {
  const k = platformKeys()
  if (k.consumerKey === '' || k.clientId === '' || k.bankId === '') fail('set CONSUMER_KEY, CLIENT_ID and BANK_ID (the values extauth expects)')
  if (env('ADMIN_TOKEN', '') === '') fail('set ADMIN_TOKEN: setup() creates the customers through the admin API')
}

function adminCall (c: AdminCall): [string, string, string, { headers: Record<string, string>, tags: Record<string, string> }] {
  return [c.method, `${ADMIN_URL}${c.path}`, JSON.stringify(c.body), {
    headers: { authorization: `Bearer ${env('ADMIN_TOKEN', '')}`, 'content-type': 'application/json' },
    // kept apart from the decision requests in the summary and out of their thresholds
    tags: { name: 'admin-seed', phase: 'setup' }
  }]
}

/** Creates the scenario's customers: step k of every customer's plan, in batches, before step k+1. */
export function seed (s: Scenario): void {
  const groups = seedPlan(s)
  const steps = Math.max(0, ...groups.map((g) => g.length))
  for (let step = 0; step < steps; step++) {
    const calls = groups.map((g) => g[step]).filter((c): c is AdminCall => c !== undefined)
    for (let i = 0; i < calls.length; i += 50) {
      const responses = http.batch(calls.slice(i, i + 50).map(adminCall))
      for (const r of responses) {
        if (r.status !== 200) fail(`seeding through the admin API failed: ${r.request.method} ${r.url} → ${r.status} ${String(r.body)}`)
      }
    }
  }
}
