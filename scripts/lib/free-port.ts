import { createServer } from 'node:net'

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address()
      s.close(() => { resolve(typeof addr === 'object' && addr !== null ? addr.port : 0) })
    })
  })
}
