// The decision script's cost in Redis alone, as EVALSHA of the script and as FCALL of the same code loaded as
// a function library (src/store/functions.ts), taking turns, beside the fair floor's script (the one bench/bench.ts
// measures extauth against): Redis time per call in the command (INFO commandstats) and the redis-server's CPU
// time per call (user + system from /proc: reading the command and writing the reply included), the median over
// the rounds, and of it what the Redis commands the script calls take. redis-server runs on a port of its own,
// pinned to one core, and redis-benchmark (C, light) sends the calls from the other, so the figures are Redis's
// and little else's. A plain approval of a known customer and card, no limits or controls, and the same with
// the channel's card control on (as the bench's requests have); and the fair floor's script with the record, the
// event and the journal's indexes of extauth's present layout, in extauth's bytes (DECIDE_WITH_WRITES_LUA): the
// least that layout costs. Not a test.
//   npm run bench:script [-- --calls 20000 --rounds 15]
//   npm run bench:script -- --parts     # and what each part of the script costs: the call without it, taking turns
//   npm run bench:script -- --instructions [--parts]   # Redis instructions (valgrind), not CPU time: the same whatever else runs
// Needs redis-server and redis-benchmark (Debian: redis-server and redis-tools), taskset if there (util-linux).
import { parseArgs } from 'node:util'
import { execFileSync } from 'node:child_process'
import type { Redis } from 'ioredis'
import { AUTHORIZE_BODY, AUTHORIZE_DEFINITIONS, AUTHORIZE_LUA } from '../src/store/lua.js'
import { AUTHORIZE_FUNCTION, AUTHORIZE_LIBRARY } from '../src/store/functions.js'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import { pairsToObject } from '../src/store/control-fields.js'
import { CHANNEL_CONTROL, approvalInput, atmLimits } from './lib/decision-input.js'
import { CARD_LAST4 } from '../k6/scenario.js'
import { Instructions, cpuSeconds, has, median, onCore, ownRedis, pinned, roundByRound } from './lib/machine.js'
import { DECIDE_LUA, DECIDE_WITH_WRITES_LUA, FAIR_FLOOR_TARGETS, floorKeysOf } from './lib/fair-floor-script.js'
import type { ControlsInput } from '../src/domain/controls.js'
import type { AuthorizeInput } from '../src/store/types.js'
import type { LimitCheck } from '../src/domain/rule-hits.js'

const { values: v } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, parts: { type: 'boolean', default: false }, instructions: { type: 'boolean', default: false } } })
/** --instructions: Redis's cost counted in instructions (Instructions, under valgrind: some 50 times slower), not CPU time */
const counting = v.instructions === true
const calls = Number(v.calls ?? (counting ? 2000 : 20000))
const rounds = Number(v.rounds ?? (counting ? 3 : 15))

/** redis-benchmark puts a fresh 12-digit number in place of each __rand_int__ of a call: a new reference */
const REF = 'R__rand_int__'
const URN = 'U1'

/** One approval of 1, as the bench sends it (a fresh reference a call, see REF), from the store itself. */
const approval = (controls?: ControlsInput, limits?: LimitCheck[]): AuthorizeInput =>
  approvalInput({ urn: URN, reference: REF, attempt: 'attempt-1', debitAmount: 1, deadlineInMs: 365 * 86_400_000, ...(controls !== undefined ? { controls } : {}), ...(limits !== undefined ? { limits } : {}) })
/** The authorize script's key count, keys and arguments for one approval of 1, from the store itself. */
function authorizeArgs (store: RedisStore, controls?: ControlsInput, limits?: LimitCheck[]): string[] {
  return store.authorizeArgs(approval(controls, limits))
}
/**
 * What one approval by extauth's function writes (the bench's approval, with REF as its reference: the same
 * lengths): its decision record's head and rest and its event's data, so that the fair floor's script with
 * extauth's writes (DECIDE_WITH_WRITES_LUA) stores the same bytes. The event's extra data is the record's rest.
 */
async function extauthWrites (admin: Redis, store: RedisStore): Promise<{ head: string, rest: string, data: string }> {
  const keys = store.keys
  await admin.hset(keys.customer(URN), 'status', 'ACTIVE', 'available', '1000')
  await admin.hset(keys.cards(URN), CARD_LAST4, 'ACTIVE')
  const reply = await admin.call('FCALL', AUTHORIZE_FUNCTION, ...store.authorizeArgs(approval())) as unknown[]
  const record = await admin.get(keys.decision(URN, REF))
  const entries = await admin.xrange(keys.stream(URN), '-', '+')
  const { d: data, x: extra } = pairsToObject(entries[0]?.[1] ?? []) as Record<string, string | undefined>
  const lf = record?.indexOf('\n') ?? -1
  if (reply[0] !== '00' || record === null || lf < 0 || entries.length !== 1 || data === undefined || extra !== record.slice(lf + 1)) {
    throw new Error(`extauth's approval did not write a record and its event as this bench expects (answer ${String(reply[0])}, ${entries.length} events)`)
  }
  await admin.flushall()
  return { head: record.slice(0, lf), rest: extra, data }
}
/**
 * The parts of the authorize function a decision pays for beyond the fair floor's script, each taken out of a
 * copy of the function library by replacing its text: what the call costs without it. A replaced text that is
 * no longer in the script stops the bench (test/bench/script-cost.test.ts runs it), so a part is never measured
 * by a copy that still has it.
 */
interface Part { name: string, body?: Array<[string, string]>, definitions?: Array<[string, string]> }
const PARTS: Part[] = [
  {
    name: 'journal time index (ZADD, its trim)',
    definitions: [['local function journal (stream, member, arrivedMs, keepS, refKey)\n', 'local function journal (stream, member, arrivedMs, keepS, refKey)\n  do refIndex(stream, member, true, refKey) return end\n']]
  },
  { name: 'journal reference index (HSETNX)', definitions: [['  refIndex(stream, member, true, refKey)\nend', '\nend']] },
  { name: 'event (XADD, the bound\'s XLEN)', definitions: [['local function emit (stream, backlogMax, etype, urn, data, extra)\n', 'local function emit (stream, backlogMax, etype, urn, data, extra)\n  do return end\n']] },
  { name: 'event stream bound (XLEN)', definitions: [["if max and max > 0 and redis.call('XLEN', stream) > max then", 'if false then']] },
  { name: 'stale-hold check (ZSCORE)', body: [["if redis.call('ZSCORE', KEYS[4] .. ':h', holdMember) then", 'if false then']] },
  { name: 'decision record (SET)', body: [["redis.call('SET', KEYS[3], record, 'EX', ttlS)", '']] }
]
function without (part: Part, i: number): { library: string, fn: string } {
  const cut = (text: string, swaps: Array<[string, string]> | undefined): string => (swaps ?? []).reduce((t, [from, to]) => {
    if (!t.includes(from)) throw new Error(`--parts: "${from.trim()}" is no longer in the script (${part.name}): update PARTS`)
    return t.replace(from, to)
  }, text)
  const fn = `extauth_bench_without_${i}`
  return { fn, library: `#!lua name=extauth_bench_part_${i}\n${cut(AUTHORIZE_DEFINITIONS, part.definitions)}\nredis.register_function('${fn}', function (KEYS, ARGV)\n${cut(AUTHORIZE_BODY, part.body)}\nend)\n` }
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
  if (counting && !Instructions.available()) throw new Error('--instructions needs valgrind (Debian: valgrind)')
  const { port, admin, stop } = await ownRedis({ core: 1, ...(counting ? { wrap: Instructions.wrap } : {}) })
  try {
    // never connected: it only puts the arguments together. All the calls go to one customer's bucket, whose
    // events no relay takes: a backlog bound out of reach, so the stream is never trimmed on the way
    const store = new RedisStore(createRedisClient({ url: `redis://127.0.0.1:${port}` }), { prefix: 'bench-script:', backlogMax: 1024 * 100_000_000 })
    const keys = store.keys
    const sha = await admin.script('LOAD', AUTHORIZE_LUA) as string
    const floorSha = await admin.script('LOAD', DECIDE_LUA) as string
    const writesSha = await admin.script('LOAD', DECIDE_WITH_WRITES_LUA) as string
    await admin.call('FUNCTION', 'LOAD', 'REPLACE', AUTHORIZE_LIBRARY)
    const pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1])
    const args = authorizeArgs(store)
    const floorKeys = floorKeysOf('bench-floor:')(URN)
    const FLOOR = 'the fair floor\'s script'
    const CONTROL = 'FCALL, channel control'
    const LIMITS = 'FCALL, control, ATM limits'
    const WRITES = 'fair floor + record, event'
    const WRITES_INDEXES = 'fair floor + record, event, indexes'
    const written = await extauthWrites(admin, store)
    const floorStream = `bench-floor:{${URN}}:s`
    const withWrites = (indexes: boolean): string[] => ['EVALSHA', writesSha, '6', floorKeys.customer, floorKeys.cards, floorKeys.decision(REF), floorStream,
      `${floorStream}:j`, `${floorStream}:r:0`, CARD_LAST4, '1', String(Date.now() + 365 * 86_400_000), String(8 * 86_400),
      written.head, written.rest, written.data, URN, indexes ? '1' : '0', String(Date.now())]
    // what each of these must have written on every call but a replay, else its figures are not of those writes
    const mustWrite = new Map([[WRITES, ['set', 'xadd']], [WRITES_INDEXES, ['set', 'xadd', 'zadd', 'hsetnx']]])
    const variants: Array<{ name: string, command: string, argv: string[] }> = [
      { name: 'EVALSHA of the script', command: 'evalsha', argv: ['EVALSHA', sha, ...args] },
      { name: 'FCALL of the function', command: 'fcall', argv: ['FCALL', AUTHORIZE_FUNCTION, ...args] },
      { name: CONTROL, command: 'fcall', argv: ['FCALL', AUTHORIZE_FUNCTION, ...authorizeArgs(store, CHANNEL_CONTROL)] },
      { name: LIMITS, command: 'fcall', argv: ['FCALL', AUTHORIZE_FUNCTION, ...authorizeArgs(store, CHANNEL_CONTROL, atmLimits(Date.now()))] },
      // as the fair floor sends it (EVALSHA): debit 1, a deadline out of reach, the record kept 8 days
      { name: FLOOR, command: 'evalsha', argv: ['EVALSHA', floorSha, '3', floorKeys.customer, floorKeys.cards, floorKeys.decision(REF), CARD_LAST4, '1', String(Date.now() + 365 * 86_400_000), String(8 * 86_400)] },
      { name: WRITES, command: 'evalsha', argv: withWrites(false) },
      { name: WRITES_INDEXES, command: 'evalsha', argv: withWrites(true) }
    ]
    const partVariants = v.parts === true ? PARTS.map((part, i) => ({ part, ...without(part, i) })) : []
    for (const p of partVariants) {
      await admin.call('FUNCTION', 'LOAD', 'REPLACE', p.library)
      variants.push({ name: `without: ${p.part.name}`, command: 'fcall', argv: ['FCALL', p.fn, ...args] })
    }
    const perCall = new Map<string, number[]>()
    const costPerCall = new Map<string, number[]>()
    const inner = new Map<string, Map<string, number>>()
    for (let round = 0; round < rounds; round++) {
      for (const variant of variants) {
        await admin.flushall()
        for (const [customer, cards] of [[keys.customer(URN), keys.cards(URN)], [floorKeys.customer, floorKeys.cards]] as const) {
          await admin.hset(customer, 'status', 'ACTIVE', 'available', '9000000000000000')
          await admin.hset(cards, CARD_LAST4, 'ACTIVE')
        }
        await admin.config('RESETSTAT')
        const [b, a] = onCore(0, ['redis-benchmark', '-p', String(port), '-c', '8', '-n', String(calls), '-r', '1000000000', '-q', ...variant.argv])
        if (counting) Instructions.zero(pid)
        const cpu0 = counting ? 0 : cpuSeconds(pid)
        execFileSync(b, a, { stdio: 'ignore' })
        // CPU µs, or with --instructions instructions (thousands), of the server over the calls
        const cost = counting ? Instructions.read(pid) / 1000 : (cpuSeconds(pid) - cpu0) * 1e6
        const stats = await commandStats(admin)
        const own = stats.get(variant.command)
        if (own === undefined || own.calls < calls) throw new Error(`${variant.name}: ${own?.calls ?? 0} of ${calls} calls ran`)
        const failed = /failed_calls=(\d+)/.exec((await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith(`cmdstat_${variant.command}:`)) ?? '')
        if (Number(failed?.[1] ?? 0) > 0) throw new Error(`${variant.name}: ${failed?.[1] ?? ''} calls failed`)
        // a call whose fresh reference happened to be drawn before is a replay, which writes nothing
        const wrote = stats.get('set')?.calls ?? 0
        for (const command of mustWrite.get(variant.name) ?? []) {
          const n = stats.get(command)?.calls ?? 0
          if (n !== wrote || n < own.calls * 0.99) throw new Error(`${variant.name}: ${n} ${command.toUpperCase()} in ${own.calls} calls`)
        }
        const list = perCall.get(variant.name) ?? []
        list.push(own.usec / own.calls)
        perCall.set(variant.name, list)
        const costs = costPerCall.get(variant.name) ?? []
        costs.push(cost / own.calls)
        costPerCall.set(variant.name, costs)
        const called = new Map<string, number>()
        for (const [name, s] of stats) if (name !== variant.command && !name.startsWith('config') && !name.startsWith('info')) called.set(name, s.usec / own.calls)
        inner.set(variant.name, called)
      }
    }
    const out = process.stdout
    const NAME = Math.max(26, ...variants.map((x) => x.name.length + 2))
    const COST = counting ? 'k instr/call' : 'CPU µs/call'
    out.write(`${calls} calls a round, ${rounds} rounds taking turns${pinned ? ', redis-server and redis-benchmark each on a core of its own' : ' (no taskset: not pinned)'}${counting ? ', redis-server under valgrind (callgrind) counting instructions' : ''}\n\n`)
    out.write(`${''.padEnd(NAME)}${'µs/call'.padStart(9)}${COST.padStart(13)}${'commands'.padStart(10)}   rounds (µs/call)\n`)
    for (const variant of variants) {
      const xs = perCall.get(variant.name) ?? []
      const commands = [...(inner.get(variant.name) ?? new Map<string, number>()).values()].reduce((a, b) => a + b, 0)
      out.write(`${variant.name.padEnd(NAME)}${median(xs).toFixed(1).padStart(9)}${median(costPerCall.get(variant.name) ?? []).toFixed(1).padStart(13)}${commands.toFixed(1).padStart(10)}   ${xs.map((x) => x.toFixed(1)).join(' ')}\n`)
    }
    const of = (m: Map<string, number[]>, name: string): number[] => m.get(name) ?? []
    out.write(`\nFCALL / EVALSHA, round by round: ${roundByRound(of(perCall, 'FCALL of the function'), of(perCall, 'EVALSHA of the script'))}\n`)
    out.write(counting
      ? 'µs/call: in the command (INFO commandstats), under valgrind; k instr/call: thousands of instructions the\n' +
        'redis-server ran over the calls, reading the command and writing the reply included\n'
      : 'µs/call: in the command (INFO commandstats); CPU µs/call: the redis-server process over the calls, reading\n' +
        'the command and writing the reply included (what bench/bench.ts counts as Redis µs per decision)\n')
    out.write('"commands": the Redis commands the script calls, per call, of the last round\n')
    const top = [...(inner.get('FCALL of the function') ?? new Map<string, number>())].sort((a, b) => b[1] - a[1])
    out.write(`  ${top.map(([n, us]) => `${n.toUpperCase()} ${us.toFixed(2)}`).join(', ')}\n`)
    const floorCost = of(costPerCall, FLOOR)
    const x2 = (r: number): string => Number.isFinite(r) && r > 0 ? r.toFixed(2) : '-'
    out.write(`\nRedis ${counting ? 'instructions' : 'CPU'} per call against the fair floor's script (target ≤ ${FAIR_FLOOR_TARGETS.redis}×), round by round:\n`)
    for (const name of ['FCALL of the function', CONTROL, LIMITS, WRITES, WRITES_INDEXES]) {
      const ratios = of(costPerCall, name).map((x, i) => x / (floorCost[i] as number))
      out.write(`  ${name.padEnd(NAME - 2)}${`${x2(median(ratios))}×`.padStart(7)}   ${ratios.map(x2).join(' ')}\n`)
    }
    if (partVariants.length > 0) {
      // in the command's µs; counting, in the server's instructions
      const by = counting ? costPerCall : perCall
      const unit = counting ? 'k instructions' : 'µs in the command'
      const full = of(by, 'FCALL of the function')
      out.write(`\nWhat each part costs a plain approval's FCALL: the call, less the call without it (${unit}), round by round:\n`)
      for (const p of partVariants) {
        const saved = of(by, `without: ${p.part.name}`).map((x, i) => (full[i] as number) - x)
        out.write(`  ${p.part.name.padEnd(40)}${median(saved).toFixed(1).padStart(6)} ${counting ? 'k ' : 'µs'} ${`(${(100 * median(saved) / median(full)).toFixed(0)} %)`.padStart(7)}   ${saved.map((x) => x.toFixed(1)).join(' ')}\n`)
      }
    }
    // the kernel counts a process's CPU time in clock ticks (10 ms here, most often)
    const leastS = Math.min(...[...costPerCall.values()].flat()) * calls / 1e6
    if (!counting && leastS < 0.2) out.write(`  (a round's CPU time is as little as ${(leastS * 1000).toFixed(0)} ms, counted in clock ticks: too few calls for these ratios)\n`)
  } finally {
    stop()
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:script: ${(err as Error).message}\n`)
  process.exit(1)
})
