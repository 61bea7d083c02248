// The decision script's cost in Redis alone, as EVALSHA of the script and as FCALL of the same code loaded as
// a function library (src/store/functions.ts), taking turns: Redis time per call (INFO commandstats), the
// median over the rounds, and of it what the Redis commands the script calls take. redis-server runs on a
// port of its own, pinned to one core, and redis-benchmark (C, light) sends the calls from the other, so the
// figures are Redis's and little else's. A plain approval of a known customer and card, no limits or
// controls: the bench's usual decision. Not a test.
//   npm run bench:script [-- --calls 20000 --rounds 15]
// Needs redis-server and redis-benchmark (Debian: redis-server and redis-tools), taskset if there (util-linux).
import { parseArgs } from 'node:util'
import { execFileSync } from 'node:child_process'
import type { Redis } from 'ioredis'
import { AUTHORIZE_LUA } from '../src/store/lua.js'
import { AUTHORIZE_FUNCTION, AUTHORIZE_LIBRARY } from '../src/store/functions.js'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import { approvalInput } from './lib/decision-input.js'
import { CARD_LAST4 } from '../k6/scenario.js'
import { has, median, onCore, ownRedis, pinned, roundByRound } from './lib/machine.js'

const { values: v } = parseArgs({ options: { calls: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '15' } } })
const calls = Number(v.calls)
const rounds = Number(v.rounds)

/** redis-benchmark puts a fresh 12-digit number in place of each __rand_int__ of a call: a new reference */
const REF = 'R__rand_int__'
const URN = 'U1'

/** The authorize script's key count, keys and arguments for one approval of 1, from the store itself. */
function authorizeArgs (store: RedisStore): string[] {
  return store.authorizeArgs(approvalInput({ urn: URN, reference: REF, attempt: 'attempt-1', debitAmount: 1, deadlineInMs: 365 * 86_400_000 }))
}

interface Stat { calls: number, usec: number }
async function commandStats (admin: Redis): Promise<Map<string, Stat>> {
  const out = new Map<string, Stat>()
  for (const line of (await admin.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line)
    if (m !== null) out.set(m[1] as string, { calls: Number(m[2]), usec: Number(m[3]) })
  }
  return out
}

async function main (): Promise<void> {
  for (const cmd of ['redis-server', 'redis-benchmark']) {
    if (!has(cmd)) throw new Error(`${cmd} is not installed`)
  }
  const { port, admin, stop } = await ownRedis({ core: 1 })
  try {
    // never connected: it only puts the arguments together. All the calls go to one customer's bucket, whose
    // events no relay takes: a backlog bound out of reach, so the stream is never trimmed on the way
    const store = new RedisStore(createRedisClient({ url: `redis://127.0.0.1:${port}` }), { prefix: 'bench-script:', backlogMax: 1024 * 100_000_000 })
    const keys = store.keys
    const sha = await admin.script('LOAD', AUTHORIZE_LUA) as string
    await admin.call('FUNCTION', 'LOAD', 'REPLACE', AUTHORIZE_LIBRARY)
    const args = authorizeArgs(store)
    const variants: Array<{ name: string, command: string, argv: string[] }> = [
      { name: 'EVALSHA of the script', command: 'evalsha', argv: ['EVALSHA', sha, ...args] },
      { name: 'FCALL of the function', command: 'fcall', argv: ['FCALL', AUTHORIZE_FUNCTION, ...args] }
    ]
    const perCall = new Map<string, number[]>()
    const inner = new Map<string, Map<string, number>>()
    for (let round = 0; round < rounds; round++) {
      for (const variant of variants) {
        await admin.flushall()
        await admin.hset(keys.customer(URN), 'status', 'ACTIVE', 'available', '9000000000000000')
        await admin.hset(keys.cards(URN), CARD_LAST4, 'ACTIVE')
        await admin.config('RESETSTAT')
        const [b, a] = onCore(0, ['redis-benchmark', '-p', String(port), '-c', '8', '-n', String(calls), '-r', '1000000000', '-q', ...variant.argv])
        execFileSync(b, a, { stdio: 'ignore' })
        const stats = await commandStats(admin)
        const own = stats.get(variant.command)
        if (own === undefined || own.calls < calls) throw new Error(`${variant.name}: ${own?.calls ?? 0} of ${calls} calls ran`)
        const failed = /failed_calls=(\d+)/.exec((await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith(`cmdstat_${variant.command}:`)) ?? '')
        if (Number(failed?.[1] ?? 0) > 0) throw new Error(`${variant.name}: ${failed?.[1] ?? ''} calls failed`)
        const list = perCall.get(variant.name) ?? []
        list.push(own.usec / own.calls)
        perCall.set(variant.name, list)
        const called = new Map<string, number>()
        for (const [name, s] of stats) if (name !== variant.command && !name.startsWith('config') && !name.startsWith('info')) called.set(name, s.usec / own.calls)
        inner.set(variant.name, called)
      }
    }
    process.stdout.write(`${calls} calls a round, ${rounds} rounds taking turns${pinned ? ', redis-server and redis-benchmark each on a core of its own' : ' (no taskset: not pinned)'}\n\n`)
    process.stdout.write(`${''.padEnd(26)}${'µs/call'.padStart(9)}${'commands'.padStart(10)}   rounds\n`)
    for (const variant of variants) {
      const xs = perCall.get(variant.name) ?? []
      const commands = [...(inner.get(variant.name) ?? new Map<string, number>()).values()].reduce((a, b) => a + b, 0)
      process.stdout.write(`${variant.name.padEnd(26)}${median(xs).toFixed(1).padStart(9)}${commands.toFixed(1).padStart(10)}   ${xs.map((x) => x.toFixed(1)).join(' ')}\n`)
    }
    const [e, f] = variants.map((x) => perCall.get(x.name) ?? [])
    process.stdout.write(`\nFCALL / EVALSHA, round by round: ${roundByRound(f as number[], e as number[])}\n`)
    process.stdout.write('"commands": the Redis commands the script calls, per call, of the last round\n')
    const top = [...(inner.get(variants[1]?.name ?? '') ?? new Map<string, number>())].sort((a, b) => b[1] - a[1])
    process.stdout.write(`  ${top.map(([n, us]) => `${n.toUpperCase()} ${us.toFixed(2)}`).join(', ')}\n`)
  } finally {
    stop()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:script: ${(err as Error).message}\n`)
  process.exit(1)
})
