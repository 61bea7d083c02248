// Creates a scenario's customers through extauth's admin API (the same calls as k6/common.ts).
import { Pool } from 'undici'
import { seedPlan, type AdminCall, type Scenario } from '../../k6/scenario.js'

export async function seedThroughAdmin (adminUrl: string, adminToken: string, s: Scenario, concurrency = 16): Promise<number> {
  const pool = new Pool(adminUrl, { connections: concurrency })
  const headers = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }
  const groups = seedPlan(s)
  let next = 0
  let calls = 0
  async function run (c: AdminCall): Promise<void> {
    const res = await pool.request({ method: c.method, path: c.path, headers, body: JSON.stringify(c.body), headersTimeout: 10_000, bodyTimeout: 10_000 })
    const text = await res.body.text()
    calls++
    if (res.statusCode !== 200) throw new Error(`seeding through the admin API failed: ${c.method} ${c.path} → ${res.statusCode} ${text}`)
  }
  // each worker takes whole customers, so a customer's calls stay in order
  async function worker (): Promise<void> {
    for (let g = groups[next++]; g !== undefined; g = groups[next++]) {
      for (const c of g) await run(c)
    }
  }
  try {
    await Promise.all(Array.from({ length: concurrency }, worker))
  } finally {
    await pool.close()
  }
  return calls
}
