// Slow senders against the public listener of a real extauth process (loopback, bounded): connections that
// dribble their headers, dribble their body, send nothing at all, or go idle after a request. Each is cut off
// at its configured timeout (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS),
// never before it, with the five-field 05 answer to a request under way (none to a connection that never sent
// a byte, nor to one idle after its answer); meanwhile normal traffic
// is answered as usual, inside the deadline. Node's defaults would hold them for 60 s to 5 min.
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { startServer } from '../helpers/server-process.js'
import { adminApi, countBy, newPool, postAuth, type Sample } from '../helpers/load.js'
import { ADMIN_TOKEN, BANK_ID, CLIENT_ID, CONSUMER_KEY, answerDueMs, authBody } from '../helpers/config.js'

const HEADERS_TIMEOUT_MS = 500
const REQUEST_TIMEOUT_MS = 800
const KEEP_ALIVE_TIMEOUT_MS = 1000
const DEADLINE_MS = 1000
/** far below Node's defaults (60 s headers, 300 s request), far above the configured timeouts */
const BOUND_MS = 10_000
const DRIP_EVERY_MS = 100

interface Cut { openMs: number, received: string, status: number, body: Record<string, unknown> | null }

const H = `Host: x\r\nContent-Type: application/json\r\nX-Consumer-Custom-ID: ${CONSUMER_KEY}\r\nclientId: ${CLIENT_ID}\r\nbankId: ${BANK_ID}\r\n`

/** Opens a connection, sends `first`, then one byte of `drip` every DRIP_EVERY_MS until the server closes it. */
async function slowSender (port: number, first: string, drip: string, after?: (s: Socket) => void): Promise<Cut> {
  return await new Promise((resolve) => {
    const t0 = performance.now()
    let received = ''
    let i = 0
    let timer: NodeJS.Timeout | undefined
    const s = connect(port, '127.0.0.1', () => {
      if (first !== '') s.write(first)
      after?.(s)
      if (drip !== '') {
        timer = setInterval(() => { if (!s.destroyed) s.write(drip[i++ % drip.length] as string) }, DRIP_EVERY_MS)
      }
    })
    s.setEncoding('latin1')
    s.on('data', (d: string) => { received += d })
    s.on('error', () => {})
    const bound = setTimeout(() => { s.destroy() }, BOUND_MS)
    s.on('close', () => {
      clearInterval(timer)
      clearTimeout(bound)
      const last = received.lastIndexOf('HTTP/1.1 ')
      const tail = last >= 0 ? received.slice(last) : ''
      let body: Record<string, unknown> | null = null
      try { body = JSON.parse(tail.split('\r\n\r\n')[1] ?? '') as Record<string, unknown> } catch {}
      resolve({ openMs: performance.now() - t0, received, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(tail)?.[1] ?? 0), body })
    })
  })
}

t.test('slow senders are cut off at the configured timeouts; normal traffic stays on time', async (t) => {
  const server = await startServer(t, {
    env: {
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
      DECISION_DEADLINE_MS: String(DEADLINE_MS),
      // not a test of shedding: a 05 shed on a busy machine would be taken for a failure here
      SHED_EVENT_LOOP_DELAY_MS: '0',
      LOG_LEVEL: 'warn'
    }
  })
  t.teardown(async () => { await server.stop() })
  await adminApi(server.adminUrl, ADMIN_TOKEN).fund('USLOW', 1_000_000_000)
  const port = server.publicPort
  const start = 'POST /api/v1/externalAuth HTTP/1.1\r\n'
  const valid = JSON.stringify(authBody({ urn: 'USLOW', transactionAmount: '100' }))

  const slowHeaders = Array.from({ length: 100 }, async () => await slowSender(port, `${start}Host: x\r\n`, 'X-Slow: abcdefgh\r\n'))
  const slowBodies = Array.from({ length: 50 }, async () => await slowSender(port, `${start}${H}Content-Length: ${valid.length + 100}\r\n\r\n`, valid))
  const silent = Array.from({ length: 50 }, async () => await slowSender(port, '', ''))
  const idleAfterOne = Array.from({ length: 20 }, async () => {
    const one = JSON.stringify(authBody({ urn: 'USLOW', transactionAmount: '100' }))
    return await slowSender(port, `${start}${H}Content-Length: ${Buffer.byteLength(one)}\r\n\r\n${one}`, '')
  })

  // normal traffic meanwhile: a steady 50/s for 3 s on a client of its own
  const pool = newPool(server.publicUrl, 16)
  t.teardown(async () => { await pool.close() })
  const normal: Array<Promise<Sample>> = []
  for (let i = 0; i < 150; i++) {
    normal.push(postAuth(pool, authBody({ urn: 'USLOW', transactionAmount: '100' }), { timeoutMs: 2000 }))
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  const [h, b, s, k, n] = await Promise.all([Promise.all(slowHeaders), Promise.all(slowBodies), Promise.all(silent), Promise.all(idleAfterOne), Promise.all(normal)])
  const span = (cuts: Cut[]): string => `${Math.min(...cuts.map((c) => c.openMs)).toFixed(0)}..${Math.max(...cuts.map((c) => c.openMs)).toFixed(0)} ms`
  t.comment(`headers dribbled: cut after ${span(h)}; body dribbled: ${span(b)}; nothing sent: ${span(s)}; idle keep-alive: ${span(k)}`)

  // a connection that never sent a byte gets no answer: one would be taken for the answer to the next request
  t.ok(s.every((c) => c.received === ''), 'nothing sent: closed without an answer')
  t.ok(s.every((c) => c.openMs >= HEADERS_TIMEOUT_MS - 20 && c.openMs < BOUND_MS), `nothing sent: closed after ${HEADERS_TIMEOUT_MS} ms, within ${BOUND_MS} ms`)
  for (const [label, cuts, timeoutMs] of [['headers dribbled', h, HEADERS_TIMEOUT_MS], ['body dribbled', b, REQUEST_TIMEOUT_MS]] as const) {
    t.same(countBy(cuts, (c) => String(c.status)), { 408: cuts.length }, `${label}: every connection answered 408`)
    t.ok(cuts.every((c) => c.body?.responseCode === '05' && Object.keys(c.body).length === 5), `${label}: with the five-field 05 answer`)
    // the server's timer can only fire late, never early (a little slack for the client's own clock)
    t.ok(cuts.every((c) => c.openMs >= timeoutMs - 20), `${label}: none cut before ${timeoutMs} ms`)
    t.ok(cuts.every((c) => c.openMs < BOUND_MS), `${label}: all closed by the server within ${BOUND_MS} ms`)
  }
  t.ok(k.every((c) => /^HTTP\/1\.1 200/.test(c.received) && (c.received.match(/HTTP\/1\.1/g) ?? []).length === 1), 'idle keep-alive: the request was answered once')
  t.ok(k.every((c) => c.openMs >= KEEP_ALIVE_TIMEOUT_MS - 20 && c.openMs < BOUND_MS), `idle keep-alive: closed by the server after ${KEEP_ALIVE_TIMEOUT_MS} ms, within ${BOUND_MS} ms`)

  t.same(countBy(n, (x) => x.error ?? `${x.status}/${x.code}`), { '200/00': n.length }, 'normal traffic: every request approved')
  const slowest = Math.max(...n.map((x) => x.ms))
  t.ok(slowest <= answerDueMs(DEADLINE_MS), `normal traffic inside the deadline: slowest ${slowest.toFixed(0)} ms`)
})
