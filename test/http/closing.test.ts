// Closing a listener (SIGTERM) with a connection open that never sent a request: a client's or a load
// balancer's spare connection carries nothing to answer and must not hold the exit past GRACE_MS.
import t from 'tap'
import { connect, type Socket } from 'node:net'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../helpers/http-checks.js'

async function openIdleConnection (app: FastifyInstance): Promise<Socket> {
  const { port } = app.server.address() as AddressInfo
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  return socket
}

for (const listener of ['publicApp', 'adminApp'] as const) {
  t.test(`${listener}: close() ends a connection that sent nothing, well within GRACE_MS`, async (t) => {
    const built = await buildApp(t)
    const app = built[listener]
    await app.listen({ host: '127.0.0.1', port: 0 })
    const socket = await openIdleConnection(app)
    t.teardown(() => { socket.destroy() })
    const clientSawClose = once(socket, 'close')
    // the bound is the configured grace period: past it, server.ts's close-with-grace exits 1
    let timer: NodeJS.Timeout | undefined
    const outcome = await Promise.race([
      app.close().then(() => 'closed'),
      new Promise<string>((resolve) => { timer = setTimeout(() => { resolve('still open') }, built.deps.config.graceMs) })
    ])
    clearTimeout(timer)
    t.equal(outcome, 'closed', 'the listener closed')
    await clientSawClose
    t.pass('the client saw its connection closed')
  })
}
