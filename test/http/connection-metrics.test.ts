// The signs of connections waiting on a busy process that Node can see: the time from accepting a public
// connection to its first request (a histogram), and the kernel accept queue's length read from /proc.
import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import { build } from '../helpers/app.js'
import { listenQueueLength } from '../../src/http/connection-metrics.js'
import { metricValue } from '../helpers/server-process.js'

t.test('accept to first request: observed once per connection, not for later requests on it', async (t) => {
  const b = await build(t)
  await b.publicApp.listen({ host: '127.0.0.1', port: 0 })
  const port = (b.publicApp.server.address() as { port: number }).port
  const GAP_MS = 150
  // one connection: wait, then two requests on it (keep-alive)
  await new Promise<void>((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      setTimeout(() => { s.write('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\nGET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n') }, GAP_MS)
    })
    s.on('data', () => {})
    s.on('close', () => { resolve() })
  })
  const text = await b.deps.metrics.registry.metrics()
  t.equal(metricValue(text, 'extauth_connection_accept_to_request_seconds_count'), 1, 'one observation for the connection')
  const sum = metricValue(text, 'extauth_connection_accept_to_request_seconds_sum') ?? 0
  t.ok(sum >= (GAP_MS - 20) / 1000, `it includes the time before the first request (${(sum * 1000).toFixed(0)} ms, sent after ${GAP_MS} ms)`)
  t.match(text, /# TYPE extauth_accept_queue_connections gauge/, 'the accept queue gauge is registered')
})

t.test('the accept queue of a listening port, read from /proc/net/tcp', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-proc-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const tcp = join(dir, 'tcp')
  const tcp6 = join(dir, 'tcp6')
  const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n'
  // port 8080 = 1F90: listening (0A) with 3 waiting; an established connection on it (01) with data queued does not count
  await writeFile(tcp, header +
    '   0: 00000000:1F90 00000000:0000 0A 00000000:00000003 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0\n' +
    '   1: 0100007F:1F90 0100007F:D431 01 00000000:00000040 00:00000000 00000000  1000        0 2 1 0 20 4 30 10 -1\n' +
    '   2: 00000000:1F91 00000000:0000 0A 00000000:00000009 00:00000000 00000000  1000        0 3 1 0 100 0 0 10 0\n')
  await writeFile(tcp6, header +
    '   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000002 00:00000000 00000000  1000        0 4 1 0 100 0 0 10 0\n')
  t.equal(listenQueueLength(8080, [tcp, tcp6]), 5, 'IPv4 and IPv6 listeners on the port, summed')
  t.equal(listenQueueLength(8081, [tcp, tcp6]), 9, 'another port')
  t.equal(listenQueueLength(9999, [tcp, tcp6]), null, 'no listener on the port: unknown, not 0')
  t.equal(listenQueueLength(8080, [join(dir, 'missing')]), null, 'no /proc: unknown')
})
