// Real HTTP against a listening app, on loopback.
import { Pool } from 'undici'
import type { FastifyInstance } from 'fastify'

interface Teardown { teardown: (fn: () => unknown) => void }

export async function listen (t: Teardown, app: FastifyInstance, connections = 64): Promise<{ url: string, pool: Pool }> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  const addr = app.server.address()
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0
  const url = `http://127.0.0.1:${port}`
  const pool = new Pool(url, { connections, pipelining: 1 })
  t.teardown(async () => { await pool.close() })
  return { url, pool }
}

export interface Answered { status: number, body: Record<string, string>, ms: number }

export async function post (pool: Pool, path: string, headers: Record<string, string>, body: unknown): Promise<Answered> {
  const t0 = performance.now()
  const res = await pool.request({ method: 'POST', path, headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.body.text()
  return { status: res.statusCode, body: JSON.parse(text) as Record<string, string>, ms: performance.now() - t0 }
}
