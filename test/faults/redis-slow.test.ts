// Redis slow: a TCP proxy between extauth and a redis-server of the test's own delays the bytes, in phases
// around the deadline (the reply of a commit made in time arriving after the deadline is the hard case).
// Every answer stays inside the deadline, and nothing is held, and no limit counter kept, for a 05.
import t from 'tap'
import { createServer, connect, type Socket, type Server } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helpers/app.js'
import { privateRedis, uniquePrefix } from '../helpers/redis.js'
import { answerDueMs, authBody } from '../helpers/config.js'
import { closedLoop, countBy, debitOf, listenApp, percentile } from '../helpers/load.js'
import { RedisStore, createRedisClient } from '../../src/store/redis.js'
import { Keys } from '../../src/store/keys.js'

const DEADLINE_MS = 300
const OPENING = 1_000_000
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface DelayProxy { port: number, delay: { toServer: number, toClient: number }, close: () => Promise<void> }

/** Forwards bytes both ways, each chunk delivered `delay` ms after it arrived, in order. */
async function delayProxy (targetPort: number): Promise<DelayProxy> {
  const delay = { toServer: 0, toClient: 0 }
  const sockets = new Set<Socket>()
  // one queue and one timer per direction, so chunks never overtake each other when the delay changes
  const pipe = (from: Socket, to: Socket, ms: () => number): void => {
    const queue: Array<{ at: number, chunk: Buffer | null }> = []
    let timer: NodeJS.Timeout | null = null
    const flush = (): void => {
      timer = null
      while (queue.length > 0 && (queue[0]?.at ?? 0) <= Date.now()) {
        const { chunk } = queue.shift() as { chunk: Buffer | null }
        if (chunk === null) to.destroy()
        else if (!to.destroyed) to.write(chunk)
      }
      if (queue.length > 0) timer = setTimeout(flush, Math.max(0, (queue[0]?.at ?? 0) - Date.now()))
    }
    const push = (chunk: Buffer | null): void => {
      const last = queue[queue.length - 1]?.at ?? 0
      queue.push({ at: Math.max(last, Date.now() + ms()), chunk })
      if (timer === null) timer = setTimeout(flush, Math.max(0, (queue[0]?.at ?? 0) - Date.now()))
    }
    from.on('data', (chunk: Buffer) => { push(chunk) })
    from.on('close', () => { push(null) })
    from.on('error', () => {})
  }
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    sockets.add(client).add(upstream)
    pipe(client, upstream, () => delay.toServer)
    pipe(upstream, client, () => delay.toClient)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const addr = server.address()
  return {
    port: typeof addr === 'object' && addr !== null ? addr.port : 0,
    delay,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

t.test('Redis slow around the deadline', async (t) => {
  const redis = await privateRedis(t)
  const proxy = await delayProxy(redis.port)
  const prefix = uniquePrefix()
  const store = new RedisStore(createRedisClient({ url: `redis://127.0.0.1:${proxy.port}` }), { prefix })
  await store.connect()
  t.teardown(async () => { await store.close(); await proxy.close() })
  const dir = await mkdtemp(join(tmpdir(), 'extauth-rules-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  // a limit that never declines here, so every approval leaves a window entry to account for
  await writeFile(join(dir, '10-limit.json'), JSON.stringify({
    rules: [{ id: 'pos-count', when: { channel: { eq: 'POS' } }, limit: { measure: 'count', per: 'urn', window: '1h', max: 1_000_000 }, then: { decline: '65' } }]
  }))
  const { publicApp, deps, logs } = await build(t, { store, env: { DECISION_DEADLINE_MS: String(DEADLINE_MS), RULES_DIR: dir }, logLevel: 'warn' })
  const { pool } = await listenApp(t, publicApp, 32)
  const urns = Array.from({ length: 6 }, (_, i) => `USLOW${process.pid}${i}`)
  for (const u of urns) {
    await store.putCustomer(u, {})
    await store.credit(u, OPENING, 'opening')
  }

  // one-way delays in ms: none, well inside, around the deadline (request or reply side), well past it
  const phases: Array<[number, number]> = [[0, 0], [50, 50], [0, 280], [280, 0], [150, 150], [0, 400], [400, 0], [20, 20]]
  let stop = false
  const load = closedLoop(pool, {
    concurrency: 16,
    durationMs: 30_000,
    stop: () => stop,
    body: (i) => authBody({ urn: urns[i % urns.length], transactionAmount: String(100 + (i % 7)) }),
    // the client gives up on an answer later than that (an AbortError below)
    post: { timeoutMs: answerDueMs(DEADLINE_MS) }
  })
  for (const [toServer, toClient] of phases) {
    proxy.delay.toServer = toServer
    proxy.delay.toClient = toClient
    await sleep(700)
  }
  stop = true
  const samples = await load
  proxy.delay.toServer = 0
  proxy.delay.toClient = 0

  const unanswered = countBy(samples.filter((s) => s.error !== undefined || s.status !== 200), (s) => s.error ?? String(s.status))
  t.same(unanswered, {}, `every request answered 200 by ${answerDueMs(DEADLINE_MS)} ms (p99 ${percentile(samples.map((s) => s.ms), 99).toFixed(0)} ms, slowest ${Math.max(...samples.map((s) => s.ms)).toFixed(0)} ms)`)
  const codes = countBy(samples, (s) => s.code)
  t.same(Object.keys(codes).sort(), ['00', '05'], `answers are 00 or 05, both seen: ${JSON.stringify(codes)}`)
  t.ok(Number((await deps.metrics.deadlineHits.get()).values[0]?.value ?? 0) > 0, 'the deadline guard answered some of them')

  // late commits land and compensations are applied; then the store must agree with the answers
  const until = Date.now() + 15_000
  while (deps.compensator.pending > 0 && Date.now() < until) await sleep(50)
  t.equal(deps.compensator.pending, 0, 'every compensation applied')
  // the proxy keeps order and the store has one connection: once a PING sent now is answered, every script
  // sent before it (late commits included) has run
  await store.client.ping()

  const keys = new Keys(prefix)
  const admin = await redis.admin()
  let compensated = 0
  for (const u of urns) {
    const mine = samples.filter((s) => s.sent.urn === u)
    const ok = mine.filter((s) => s.code === '00')
    t.equal((await store.getCustomer(u))?.available, OPENING - ok.reduce((sum, s) => sum + debitOf(s.sent), 0), `${u}: balance = opening − ${ok.length} approvals`)
    t.equal(await admin.zcard(keys.limit(u, '4321', { ruleId: 'pos-count', per: 'urn' })), ok.length, `${u}: the limit window counts exactly the approvals`)
    let badRecords = 0
    for (const s of mine) {
      const rec = await store.getDecision(u, s.sent.transactionReferenceNumber as string)
      if (s.code === '00') {
        if (rec?.code !== '00' || rec.held !== String(debitOf(s.sent))) badRecords++
      } else {
        if (rec !== null && (rec.held !== '0' || rec.code !== '05')) badRecords++
        if (rec?.decidedCode === '00') compensated++
      }
    }
    t.equal(badRecords, 0, `${u}: every stored decision agrees with its answer (00 held, 05 holds nothing)`)
  }
  // nothing but deadline compensations may have gone wrong enough to log (an internal error would show here)
  const warnings = countBy(logs.filter((l) => (l.level as number) >= 40), (l) => String(l.msg))
  t.same(Object.keys(warnings).filter((m) => m !== 'deadline compensation applied' && m !== 'deadline compensation waiting for the store'), [], `warnings and errors logged: ${JSON.stringify(warnings)}`)
  t.comment(`${samples.length} requests ${JSON.stringify(codes)}; ${compensated} were committed 00 by Redis in time but answered 05 and released`)
})
