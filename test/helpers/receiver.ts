// A webhook receiver on loopback for the events tests: records every request (headers, raw body) and answers
// with the status the test sets; it can also be closed (connection refused) and opened again on its port.
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  headers: Record<string, string>
  body: string
  status: number
}

interface Teardown { teardown: (fn: () => unknown) => void }

export interface Receiver {
  url: string
  received: Received[]
  /** the status answered from now on */
  status: number
  /** answers `status(event)` instead when set */
  decide: ((event: { id: string, type: string, data: Record<string, unknown> }) => number) | null
  /** the accepted (2xx) events' bodies, in arrival order */
  accepted: () => Array<{ id: string, type: string, createdAt: string, data: Record<string, unknown> }>
  /** resolves once `pred` holds after a request (or now) */
  until: (pred: () => boolean) => Promise<void>
  down: () => Promise<void>
  up: () => Promise<void>
}

export async function receiver (t: Teardown): Promise<Receiver> {
  const waiters: Array<{ pred: () => boolean, resolve: () => void }> = []
  let server: Server
  let port = 0
  const r: Receiver = {
    url: '',
    received: [],
    status: 204,
    decide: null,
    accepted: () => r.received.filter((x) => x.status < 300).map((x) => JSON.parse(x.body)),
    until: async (pred) => {
      if (pred()) return
      await new Promise<void>((resolve) => waiters.push({ pred, resolve }))
    },
    down: async () => { await new Promise((resolve) => { server.close(resolve); server.closeAllConnections() }) },
    up: async () => { await listen() }
  }
  const handle = (req: IncomingMessage, body: string): number => {
    const parsed = JSON.parse(body)
    const status = r.decide !== null ? r.decide(parsed) : r.status
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v
    r.received.push({ headers, body, status })
    return status
  }
  const listen = async (): Promise<void> => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const status = handle(req, Buffer.concat(chunks).toString('utf8'))
        res.writeHead(status).end()
        for (const w of [...waiters]) {
          if (w.pred()) { waiters.splice(waiters.indexOf(w), 1); w.resolve() }
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
    r.url = `http://127.0.0.1:${port}/hooks`
  }
  await listen()
  t.teardown(async () => { await new Promise((resolve) => { server.close(resolve); server.closeAllConnections() }) })
  return r
}
