// The events receiver of `bench/scale.ts --events`, in a process of its own as the client's back end would be:
// accepts every POST with 204 and counts them; the parent asks for the count over IPC (`'count'` → a number)
// and learns the port from the first message. Not a test.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

let received = 0
/** the parent may be gone (stopped by a signal) by the time a message is sent: then there is no one to tell */
const tell = (m: unknown): void => { process.send?.(m, undefined, {}, () => {}) }
const server = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    received++
    res.writeHead(204).end()
  })
})
server.listen(0, '127.0.0.1', () => { tell({ port: (server.address() as AddressInfo).port }) })
process.on('message', () => { tell(received) })
process.on('disconnect', () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
