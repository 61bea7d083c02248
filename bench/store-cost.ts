// Node's CPU time per decision in the store call (RedisStore.authorize: putting the arguments together, the
// command, the reply), apart from HTTP: each round a worker process (bench/lib/store-worker.ts) runs the calls,
// 32 in flight, on one core, against a redis-server of its own on the other, and reports its CPU time per call.
// Beside it in the same run, the floor: a worker whose call is one EVALSHA of a one-line script; with
// `--compare DIR`, the store of another checkout (built from its sources, DIR/dist). The workers take turns
// round by round, so the machine's other work falls on all alike; it prints each one's median and, against
// the other checkout, the median of the rounds' ratios. Every worker runs built JavaScript. Not a test.
//   npm run bench:store [-- --compare DIR] [--calls 30000] [--rounds 8]
import { parseArgs } from 'node:util'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join, basename, resolve } from 'node:path'
import { REPO_ROOT } from '../scripts/lib/extauth.js'
import { buildCheckout, median, onCore, ownRedis, pinned, roundByRound } from './lib/machine.js'

const { values: v } = parseArgs({
  options: {
    compare: { type: 'string' },
    calls: { type: 'string', default: '30000' },
    rounds: { type: 'string', default: '8' }
  }
})
const calls = Number(v.calls)
const rounds = Number(v.rounds)
const worker = join(REPO_ROOT, '.bench-build/bench/lib/store-worker.js')

interface Variant { name: string, args: string[] }

async function main (): Promise<void> {
  buildCheckout(REPO_ROOT, 'tsconfig.bench.json')
  const variants: Variant[] = [
    { name: 'floor (one EVALSHA)', args: ['--floor'] },
    { name: 'extauth', args: ['--store', join(REPO_ROOT, '.bench-build/src/store/redis.js')] }
  ]
  if (v.compare !== undefined) {
    const dir = resolve(v.compare)
    buildCheckout(dir, 'tsconfig.build.json')
    variants.push({ name: `extauth@${basename(dir)}`, args: ['--store', join(dir, 'dist/store/redis.js')] })
  }
  const { port, admin, stop } = await ownRedis({ core: 1 })
  try {
    const cpu = new Map<string, number[]>(variants.map((x) => [x.name, []]))
    for (let round = 0; round < rounds; round++) {
      // each round starts with the next variant
      for (let i = 0; i < variants.length; i++) {
        const variant = variants[(round + i) % variants.length] as Variant
        await admin.flushall()
        const [b, a] = onCore(0, [process.execPath, worker, ...variant.args, '--port', String(port), '--calls', String(calls)])
        const { stdout } = await promisify(execFile)(b, a, { cwd: REPO_ROOT, timeout: 600_000 })
        const out = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { cpuUsPerCall?: number }
        if (typeof out.cpuUsPerCall !== 'number') throw new Error(`${variant.name}: no figure in ${stdout}`)
        cpu.get(variant.name)?.push(out.cpuUsPerCall)
      }
    }
    process.stdout.write(`${calls} calls a round, 32 in flight, ${rounds} rounds taking turns${pinned ? ', the worker and redis-server each on a core of its own' : ' (no taskset: not pinned)'}\n\n`)
    process.stdout.write(`${'Node CPU µs per call'.padEnd(34)}${'median'.padStart(8)}   rounds\n`)
    for (const x of variants) {
      const xs = cpu.get(x.name) ?? []
      process.stdout.write(`${x.name.padEnd(34)}${median(xs).toFixed(1).padStart(8)}   ${xs.map((n) => n.toFixed(1)).join(' ')}\n`)
    }
    const ours = cpu.get('extauth') ?? []
    for (const other of variants.slice(2)) {
      process.stdout.write(`\nextauth / ${other.name}, round by round: ${roundByRound(ours, cpu.get(other.name) ?? [])}\n`)
    }
    const floor = median(cpu.get(variants[0]?.name ?? '') ?? [])
    process.stdout.write(`extauth's store call beyond one round trip: ${(median(ours) - floor).toFixed(1)} µs of Node CPU per decision\n`)
  } finally {
    stop()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:store: ${(err as Error).message}\n`)
  process.exit(1)
})
