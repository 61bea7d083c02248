// What Node can see of connections waiting on a busy process. A burst of new connections first waits in the
// kernel's accept queue, before any timer of ours starts (docs/operations/runbook.md): that wait is not
// measurable from inside, but two signs of it are: the accept queue's length (Linux, read at scrape time)
// and the time from accepting a connection to the start of its first request.
import { readFileSync } from 'node:fs'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Gauge } from 'prom-client'
import type { Metrics } from '../metrics.js'

const acceptedAt = new WeakMap<Socket, number>()

export function observeConnections (app: FastifyInstance, metrics: Metrics): void {
  app.server.on('connection', (socket: Socket) => { acceptedAt.set(socket, performance.now()) })
  app.addHook('onRequest', (request, _reply, done) => {
    const socket = request.raw.socket
    const at = acceptedAt.get(socket)
    if (at !== undefined) {
      // only the first request of a connection: later ones waited on the client, not on us
      acceptedAt.delete(socket)
      metrics.acceptToRequestSeconds.observe((performance.now() - at) / 1000)
    }
    done()
  })
  const port = (): number | null => {
    const a = app.server.address()
    return a !== null && typeof a === 'object' ? a.port : null
  }
  // one gauge per registry (a test may build several public apps on one set of metrics)
  if (metrics.registry.getSingleMetric('extauth_accept_queue_connections') !== undefined) return
  // eslint-disable-next-line no-new -- a gauge registers itself in `registers`: nothing else needs to hold it
  new Gauge({
    name: 'extauth_accept_queue_connections',
    help: 'Connections waiting in the kernel accept queue of the public listener at scrape time (Linux; absent elsewhere)',
    registers: [metrics.registry],
    collect () {
      const p = port()
      const n = p === null ? null : listenQueueLength(p)
      if (n !== null) this.set(n)
    }
  })
}

/**
 * The accept queue of the listening socket(s) on `port`: for a socket in LISTEN state, /proc/net/tcp's
 * rx_queue column is the number of connections waiting to be accepted. null when not readable.
 */
export function listenQueueLength (port: number, files = ['/proc/net/tcp', '/proc/net/tcp6']): number | null {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0')
  let total: number | null = null
  for (const f of files) {
    let text: string
    try {
      text = readFileSync(f, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/)
      // cols: sl local_address rem_address st tx_queue:rx_queue ...; LISTEN is 0A
      if (cols.length < 5 || cols[3] !== '0A' || !(cols[1] ?? '').endsWith(`:${hexPort}`)) continue
      const rx = parseInt((cols[4] ?? '').split(':')[1] ?? '', 16)
      if (Number.isFinite(rx)) total = (total ?? 0) + rx
    }
  }
  return total
}
