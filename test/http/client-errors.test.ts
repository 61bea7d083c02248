// Requests Node's HTTP parser refuses before any route runs still get the contract's answer (§3): the five
// fields with 05, each kind sent over a raw socket to the listening public app. The admin listener keeps
// Fastify's own error body (it is not the platform's endpoint).
import t from 'tap'
import { connect } from 'node:net'
import { build } from '../helpers/app.js'
import { BANK_ID, CLIENT_ID, CONSUMER_KEY } from '../helpers/config.js'
import { statusForClientError } from '../../src/http/client-errors.js'

const ANSWER_KEYS = ['currencyCode', 'responseCode', 'responseDateTime', 'responseDescription', 'transactionAmount']

/** Sends bytes on a fresh connection; resolves with everything received until the server closes it. */
export async function rawExchange (port: number, bytes: string | Buffer, opts: { end?: boolean } = {}): Promise<string> {
  return await new Promise((resolve) => {
    const s = connect(port, '127.0.0.1')
    let got = ''
    s.setEncoding('latin1')
    s.on('data', (d: string) => { got += d })
    s.on('close', () => { resolve(got) })
    s.on('error', () => { resolve(got) })
    s.setTimeout(5000, () => { s.destroy() })
    s.write(bytes, () => { if (opts.end === true) s.end() })
  })
}

/** The status and the parsed JSON body of one raw HTTP/1.1 answer. */
export function parseAnswer (raw: string): { status: number, headers: string, body: Record<string, unknown> | null } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0)
  const [headers = '', body = ''] = raw.split('\r\n\r\n', 2)
  let parsed: Record<string, unknown> | null = null
  try { parsed = JSON.parse(body) as Record<string, unknown> } catch {}
  return { status, headers, body: parsed }
}

t.test('each kind of request the parser refuses is answered with the five fields and 05', async (t) => {
  const b = await build(t)
  await b.publicApp.listen({ host: '127.0.0.1', port: 0 })
  const port = (b.publicApp.server.address() as { port: number }).port
  const h = `Host: x\r\nContent-Type: application/json\r\nX-Consumer-Custom-ID: ${CONSUMER_KEY}\r\nclientId: ${CLIENT_ID}\r\nbankId: ${BANK_ID}\r\n`
  const start = 'POST /api/v1/externalAuth HTTP/1.1\r\n'
  const kinds: Array<[string, string, number]> = [
    ['a header line without a colon', `${start}${h}broken header line\r\n\r\n`, 400],
    ['NUL in a header value', `${start}${h}X-Note: a\u0000b\r\n\r\n`, 400],
    ['NUL in the request line', 'POST /api/v1/ext\u0000Auth HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['conflicting Content-Length', `${start}${h}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, 400],
    ['Content-Length with Transfer-Encoding', `${start}${h}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`, 400],
    ['bad chunked encoding', `${start}${h}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400],
    ['headers over 16 KiB', `${start}${h}X-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`, 431],
    ['a bad request line', 'HELLO WORLD\r\n\r\n', 400],
    ['an unknown HTTP version', 'POST /api/v1/externalAuth HTTP/7.3\r\nHost: x\r\n\r\n', 400]
  ]
  for (const [label, bytes, status] of kinds) {
    const a = parseAnswer(await rawExchange(port, Buffer.from(bytes, 'latin1')))
    t.equal(a.status, status, `${label}: HTTP ${status}`)
    t.same(Object.keys(a.body ?? {}).sort(), ANSWER_KEYS, `${label}: the five fields`)
    t.match(a.body, { responseCode: '05', responseDescription: 'DO_NOT_HONOR', transactionAmount: '', currencyCode: '356' }, `${label}: 05`)
    t.match(a.body?.responseDateTime, /^\d{14}$/, `${label}: a 14-digit responseDateTime`)
    t.match(a.headers, /content-type: application\/json/i, `${label}: JSON`)
  }
  const metrics = await b.deps.metrics.registry.metrics()
  // a broken chunked body is seen by both the parser and the body reader (which counts it too)
  const count400 = Number(/extauth_rejected_requests_total\{status="400"\} (\d+)/.exec(metrics)?.[1] ?? 0)
  t.ok(count400 >= kinds.filter(([, , s]) => s === 400).length, `counted as rejected requests, by status (400: ${count400})`)
  t.match(metrics, /extauth_rejected_requests_total\{status="431"\} 1/)
  t.ok(b.logs.some((l) => l.msg === 'malformed or too slow request refused by the HTTP parser' && l.code === 'HPE_HEADER_OVERFLOW'), 'logged with the parser\'s code')
})

t.test('a second answer is never spliced into a response already under way', async (t) => {
  const b = await build(t, { env: { HTTP_HEADERS_TIMEOUT_MS: '200', HTTP_REQUEST_TIMEOUT_MS: '400' } })
  await b.publicApp.listen({ host: '127.0.0.1', port: 0 })
  const port = (b.publicApp.server.address() as { port: number }).port
  // answered 401 on its headers while its body is still to come, then the body never completes
  const raw = await rawExchange(port, 'POST /api/v1/externalAuth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"urn":')
  const answers = raw.match(/HTTP\/1\.1 \d{3}/g) ?? []
  t.same(answers, ['HTTP/1.1 401'], 'one answer: the 401, not a 408 after it')
})

t.test('status by parser error code', async (t) => {
  t.equal(statusForClientError('ERR_HTTP_REQUEST_TIMEOUT'), 408)
  t.equal(statusForClientError('HPE_HEADER_OVERFLOW'), 431)
  t.equal(statusForClientError('HPE_INVALID_METHOD'), 400)
  t.equal(statusForClientError(undefined), 400)
})
