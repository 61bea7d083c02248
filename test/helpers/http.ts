// Real HTTP against an app of build(t): listen on a free loopback port with an undici pool (closed at
// teardown), and POST JSON, timing the answer at the client.
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import { Pool } from 'undici'

interface Teardown { teardown: (fn: () => unknown) => void }

export interface Listening {
  /** http://127.0.0.1:<port> */
  url: string
  port: number
  pool: Pool
}

/** Listens on 127.0.0.1 and a free port; the pool is closed at teardown (the app by build's teardown). */
export async function listen (t: Teardown, app: FastifyInstance, connections = 64): Promise<Listening> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  const url = `http://127.0.0.1:${port}`
  const pool = new Pool(url, { connections })
  t.teardown(async () => { await pool.close() })
  return { url, port, pool }
}

export interface Posted {
  status: number
  /** the parsed JSON answer ({} when the answer was not JSON) */
  body: Record<string, unknown>
  /** the raw answer */
  text: string
  /** ms from sending to the full answer, at the client */
  ms: number
}

export async function post (pool: Pool, path: string, headers: Record<string, string>, body: unknown): Promise<Posted> {
  const t0 = performance.now()
  const res = await pool.request({ method: 'POST', path, headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.body.text()
  const ms = performance.now() - t0
  let parsed: Record<string, unknown> = {}
  try { parsed = JSON.parse(text) as Record<string, unknown> } catch {}
  return { status: res.statusCode, body: parsed, text, ms }
}
