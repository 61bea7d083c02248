// One round of bench/store-cost.ts in a process of its own: `calls` decisions through a Redis store's
// authorize, 32 in flight, after a warm-up, and the process's CPU time (user + system) per call, printed as one
// JSON line. `--store` names the store module to load (this checkout's built one, or another checkout's
// dist/store/redis.js); `--floor` makes each call one EVALSHA of a one-line script instead (the least a call can
// cost Node). Not a test.
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { pathToFileURL } from 'node:url'
import { CHANNEL_CONTROL, approvalInput } from './decision-input.js'

const { values: v } = parseArgs({
  options: {
    store: { type: 'string' },
    floor: { type: 'boolean', default: false },
    port: { type: 'string' },
    calls: { type: 'string', default: '30000' },
    prefix: { type: 'string', default: 'bench-store:' }
  }
})
const calls = Number(v.calls)
const url = `redis://127.0.0.1:${v.port ?? ''}`
const URNS = 1000
const IN_FLIGHT = 32

interface StoreLike {
  connect: () => Promise<void>
  close: () => Promise<void>
  putCustomer: (urn: string, patch: object) => Promise<unknown>
  credit: (urn: string, amount: number, reference: string) => Promise<unknown>
  authorize: (input: object) => Promise<{ code: string }>
}

async function run (call: (i: number) => Promise<void>, count: number, from: number): Promise<void> {
  let next = from
  const end = from + count
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < end) await call(next++)
  }))
}

async function main (): Promise<void> {
  let call: (i: number) => Promise<void>
  let close: () => Promise<void>
  if (v.floor) {
    const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true })
    redis.defineCommand('floorCall', { numberOfKeys: 1, lua: "return redis.call('HINCRBY', KEYS[1], 'n', 1)" })
    await redis.connect()
    const floor = redis as unknown as { floorCall: (key: string) => Promise<number> }
    call = async (i) => { await floor.floorCall(`${v.prefix}{${i % URNS}}:floor`) }
    close = async () => { await redis.quit() }
  } else {
    if (v.store === undefined) throw new Error('--store or --floor')
    const mod = await import(pathToFileURL(v.store).href) as { RedisStore: new (client: unknown, opts: object) => StoreLike, createRedisClient: (o: object) => unknown }
    const store = new mod.RedisStore(mod.createRedisClient({ url }), { prefix: v.prefix })
    await store.connect()
    for (let i = 0; i < URNS; i++) {
      await store.putCustomer(`U${i}`, {})
      await store.credit(`U${i}`, 1e12, `open-${i}`)
    }
    call = async (i) => {
      const d = await store.authorize(approvalInput({ urn: `U${i % URNS}`, reference: `R${process.pid}-${i}`, attempt: `A${i}`, debitAmount: 100, deadlineInMs: 1200, controls: CHANNEL_CONTROL }))
      if (d.code !== '00') throw new Error(`decision ${i} answered ${d.code}`)
    }
    close = async () => { await store.close() }
  }
  await run(call, Math.min(5000, calls), 0)
  const before = process.cpuUsage()
  const t0 = performance.now()
  await run(call, calls, 1_000_000)
  const cpu = process.cpuUsage(before)
  const wallMs = performance.now() - t0
  await close()
  process.stdout.write(JSON.stringify({ cpuUsPerCall: (cpu.user + cpu.system) / calls, wallUsPerCall: wallMs * 1000 / calls }) + '\n')
}

main().catch((err: unknown) => {
  process.stderr.write(`store-worker: ${(err as Error).message}\n`)
  process.exit(1)
})
