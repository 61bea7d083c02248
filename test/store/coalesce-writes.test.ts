// The authorize commands of one turn of the event loop go to Redis in one write (src/store/coalesce-writes.ts):
// counted on the connection's socket, with a real Redis; each command still gets its own answer, in order, and a
// client not connected is left alone.
import t from 'tap'
import type { Socket } from 'node:net'
import { Redis } from 'ioredis'
import { WriteCoalescer } from '../../src/store/coalesce-writes.js'
import { SHARED_REDIS_URL, sharedRedisStore } from '../helpers/redis.js'
import { authInput } from './contract.js'

/** how many times the socket handed data to the kernel, and how many chunks each time */
function countWrites (socket: Socket): number[] {
  const writes: number[] = []
  const s = socket as unknown as { _write: (...a: unknown[]) => void, _writev: (chunks: unknown[], cb: unknown) => void }
  const write = s._write.bind(socket)
  const writev = s._writev.bind(socket)
  s._write = (...a) => { writes.push(1); write(...a) }
  s._writev = (chunks, cb) => { writes.push(chunks.length); writev(chunks, cb) }
  return writes
}

t.test('commands sent in one turn: one write of them all, each answered as before', async (t) => {
  const client = new Redis(SHARED_REDIS_URL, { lazyConnect: true })
  t.teardown(() => { client.disconnect() })
  await client.connect()
  const writes = countWrites((client as unknown as { stream: Socket }).stream)
  const c = new WriteCoalescer()
  const sent = Array.from({ length: 10 }, (_, i) => { c.before(client); return client.echo(`m${i}`) })
  t.same(await Promise.all(sent), Array.from({ length: 10 }, (_, i) => `m${i}`), 'every answer, in order')
  t.same(writes, [10], 'one write of the ten')

  // without it, the same ten leave in more than one write (what it saves)
  writes.length = 0
  await Promise.all(Array.from({ length: 10 }, async (_, i) => await client.echo(`n${i}`)))
  t.ok(writes.length > 1, `${writes.length} writes without it`)

  // the next turn is corked anew
  writes.length = 0
  c.before(client)
  t.equal(await client.echo('later'), 'later')
  t.same(writes, [1])
})

t.test('a client not connected is not corked: its commands wait in the offline queue as before', async (t) => {
  const client = new Redis(SHARED_REDIS_URL, { lazyConnect: true })
  t.teardown(() => { client.disconnect() })
  const c = new WriteCoalescer()
  c.before(client)
  t.equal(client.status, 'wait', 'not connected')
  // lazyConnect: the command connects the client, and waits in the offline queue meanwhile
  t.equal(await client.echo('queued'), 'queued')
  t.equal((client as unknown as { stream: Socket }).stream.writableCorked, 0, 'the socket is not left corked')
})

t.test('the store: concurrent decisions of one turn go in one write, each decided', async (t) => {
  const store = await sharedRedisStore(t)
  for (let i = 0; i < 8; i++) await store.putCustomer(`UCW${i}`, {})
  await store.ping()
  const writes = countWrites((store.client as unknown as { stream: Socket }).stream)
  const results = await Promise.all(Array.from({ length: 8 }, async (_, i) => await store.authorize(authInput(`UCW${i}`, { reference: `CW${i}`, debitAmount: 0 }))))
  t.same(results.map((r) => r.code), Array(8).fill('00'))
  t.same(writes, [8], 'eight authorize commands, one write')
})

t.test('a Cluster: each master\'s commands of one turn in one write, each answered', async (t) => {
  const { startCluster } = await import('../helpers/cluster.js')
  const { Cluster } = await import('ioredis')
  const nodes = await startCluster(t)
  const cluster = new Cluster(nodes)
  t.teardown(() => { cluster.disconnect() })
  // every master connected and ready
  await Promise.all(Array.from({ length: 30 }, async (_, i) => await cluster.set(`cw{${i}}`, '1')))
  const masters = cluster.nodes('master')
  t.equal(masters.length, 3)
  const writes = masters.map((m) => countWrites((m as unknown as { stream: Socket }).stream))
  const c = new WriteCoalescer()
  const keys = Array.from({ length: 30 }, (_, i) => `cw{${i}}`)
  const sent = keys.map((k) => { c.before(cluster); return cluster.incr(k) })
  t.same(await Promise.all(sent), Array(30).fill(2), 'every answer')
  t.same(writes.map((w) => w.length), [1, 1, 1], 'one write to each master')
  t.equal(writes.reduce((n, w) => n + (w[0] ?? 0), 0), 30, 'the thirty commands among them')
})
