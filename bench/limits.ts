// The authorize script's cost against the history of an amount limit's window: Redis CPU time per decision
// (INFO commandstats, usec of EVALSHA per call) with 0, 1,000, 10,000 and 50,000 entries in the window, for the
// script as it is (running totals per minute, hour and day) and, in the same run, for the entry-by-entry sum it
// replaced (kept here only, rebuilt from the same script text). Also how a window stored without totals (the
// upgrade) is summed into them over its first decisions, and Redis memory per limit entry. Not a test.
//   npm run bench:limits [-- --decisions 300]
// Runs its own redis-server on a free port (commandstats there count these scripts alone); REDIS_SERVER names
// the binary (default redis-server).
import { parseArgs } from 'node:util'
import type { Redis } from 'ioredis'
import { RedisStore, createRedisClient } from '../src/store/redis.js'
import { entryByEntryScript } from './lib/entry-by-entry.js'
import { Keys, limitMember } from '../src/store/keys.js'
import type { LimitCheck } from '../src/domain/rule-hits.js'
import type { AuthorizeInput } from '../src/store/types.js'
import { ownRedis } from './lib/machine.js'
import { percentile, sortedCopy } from '../scripts/lib/stats.js'
import { calendarStartMs } from '../src/rules/window.js'

const { values: v } = parseArgs({ options: { decisions: { type: 'string', default: '300' } } })
const decisions = Number(v.decisions)
const SIZES = [0, 1_000, 10_000, 50_000]
const DAY = 86_400_000
/** The least aligned of real zones' offsets (+5:45): a local midnight there is a quarter-hour edge in UTC. */
const CALENDAR_ZONE = 'Asia/Kathmandu'
/**
 * Where the window starts in the 30 days of history, given the decision's time: before all of it (a rolling
 * window, whose retention is its length); half-way at any instant, moving with the clock (the worst case: a
 * partial minute and every level's slices to read; a rolling window whose oldest entries are not yet trimmed
 * starts so, near its oldest entry); or half-way at a local midnight (a calendar month half over: its retention
 * reaches further back than its start, which stays put all month).
 */
const SCENARIOS: Array<{ name: string, start: (nowMs: number) => number }> = [
  { name: 'rolling 30d: the whole history counts', start: (now) => now - 30 * DAY - 12_345 },
  { name: 'mid-history at any instant (moving with the clock)', start: (now) => now - 15 * DAY - 12_345 },
  { name: `month half over: a local midnight mid-history (${CALENDAR_ZONE})`, start: (now) => calendarStartMs('day', now - 15 * DAY, CALENDAR_ZONE) }
]

async function evalshaStats (admin: Redis): Promise<{ calls: number, usec: number }> {
  const line = (await admin.info('commandstats')).split('\r\n').find((l) => l.startsWith('cmdstat_evalsha:'))
  const m = /calls=(\d+),usec=(\d+)/.exec(line ?? '')
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) }
}

async function main (): Promise<void> {
  const { port, admin, stop } = await ownRedis({ bin: process.env.REDIS_SERVER })
  const url = `redis://127.0.0.1:${port}`
  const prefix = 'bench-limits:'
  const keys = new Keys(prefix)
  const stores = {
    // both through EVALSHA: one of them runs a variant of the script's text
    totals: new RedisStore(createRedisClient({ url }), { prefix, functions: false }),
    entries: new RedisStore(createRedisClient({ url }), { prefix, functions: false })
  }
  await stores.totals.connect()
  await stores.entries.connect()
  stores.entries.client.defineCommand('extauthAuthorize', { lua: entryByEntryScript() })

  const memory: Record<string, number> = {}
  let upgrade = { steps: 0, slowest: 0 }
  let worst = 0
  for (const [si, scenario] of SCENARIOS.entries()) {
    const cases: Array<{ variant: 'totals' | 'entries', n: number, store: RedisStore, input: (i: number) => AuthorizeInput, usec: number[] }> = []
    for (const n of SIZES) {
      for (const variant of ['entries', 'totals'] as const) {
        const store = stores[variant]
        const urn = `B${variant}${n}s${si}`
        await store.putCustomer(urn, {})
        await store.credit(urn, 9_000_000_000_000, `seed-${urn}`)
        const now = Date.now()
        const limit: LimitCheck = { ruleId: 'amt', mode: 'enforce', measure: 'amount', per: 'urn', windowStartMs: scenario.start(now), retainMs: 31 * DAY + 3_600_000, max: Number.MAX_SAFE_INTEGER, code: '61', values: {} }
        const wkey = keys.limit(urn, '4321', limit)
        // the window's history as an earlier version stored it: entries spread over 30 days, no totals
        for (let i = 0; i < n; i += 1000) {
          const args: Array<string | number> = []
          for (let j = i; j < Math.min(n, i + 1000); j++) args.push(now - Math.floor((j / n) * 30 * DAY) - 1000, limitMember(100 + (j % 5000), `H${j}`))
          await admin.zadd(wkey, ...args)
        }
        if (n > 0) await admin.pexpire(wkey, limit.retainMs)
        const input = (i: number): AuthorizeInput => ({
          urn, last4: '4321', reference: `R${variant}${n}-${i}`, attempt: `a${i}`, debitAmount: 100, fingerprint: 'fp', nowMs: Date.now(), deadlineAtMs: Date.now() + 60_000,
          decline: null, limits: [{ ...limit, windowStartMs: scenario.start(Date.now()) }], meta: { rulesVersion: 'b', shadowHits: [], transactionAmount: '100', currencyCode: '356', channel: 'POS' }
        })
        // a window stored without totals is summed into them over its first decisions (the upgrade)
        let steps = 0
        let slowest = 0
        do {
          const b0 = await evalshaStats(admin)
          const first = await store.authorize(input(-1 - steps))
          if (first.code !== '00') throw new Error(`${variant} ${n}: ${first.code} ${first.reason}`)
          const b1 = await evalshaStats(admin)
          slowest = Math.max(slowest, b1.usec - b0.usec)
          await store.reverse(urn, input(-1 - steps).reference, null)
          steps++
          // eslint-disable-next-line no-unmodified-loop-condition -- the loop ends on what Redis answers; variant and n only choose whether it repeats at all
        } while (variant === 'totals' && n > 0 && await admin.hget(`${wkey}:t`, 'v') !== '1')
        if (variant === 'totals' && n === SIZES[SIZES.length - 1] && si === 0) upgrade = { steps, slowest }
        cases.push({ variant, n, store, input, usec: [] })
        if (n === SIZES[SIZES.length - 1] && si === 0) {
          const zset = Number(await admin.call('MEMORY', 'USAGE', wkey, 'SAMPLES', '0'))
          const totals = Number(await admin.call('MEMORY', 'USAGE', `${wkey}:t`, 'SAMPLES', '0') ?? 0)
          const count = await admin.zcard(wkey)
          memory[variant] = (zset + totals) / count
          if (variant === 'totals') memory.totalsOnly = totals / count
        }
      }
    }
    // the cases take turns, one decision each, so the machine's load falls on all of them alike; each decision's
    // own cost (commandstats before and after it), the median reported
    for (let i = 0; i < decisions; i++) {
      for (const c of cases) {
        const s0 = await evalshaStats(admin)
        const r = await c.store.authorize(c.input(i))
        const s1 = await evalshaStats(admin)
        if (r.code !== '00') throw new Error(`${c.variant} ${c.n}: ${r.code} ${r.reason}`)
        c.usec.push(s1.usec - s0.usec)
        // given back, so the window holds its n entries again (an empty one stays empty)
        await c.store.reverse(c.input(i).urn, c.input(i).reference, null)
      }
    }
    const med = (variant: string, n: number): number => percentile(sortedCopy(cases.find((c) => c.variant === variant && c.n === n)?.usec ?? []), 50)
    console.log(`authorize script, Redis CPU per decision (median µs, INFO commandstats), one amount limit, 30 days of history, ${decisions} decisions a case; ${scenario.name}`)
    console.log(' entries | entry by entry |       totals | totals/old | totals vs empty')
    for (const n of SIZES) {
      const e = med('entries', n)
      const t = med('totals', n)
      console.log(`${String(n).padStart(8)} | ${e.toFixed(1).padStart(14)} | ${t.toFixed(1).padStart(12)} | ${(t / e).toFixed(2).padStart(10)} | ${(t / med('totals', 0)).toFixed(2).padStart(15)}`)
    }
    worst = Math.max(worst, med('totals', SIZES[SIZES.length - 1] as number) / med('totals', 0))
  }
  const last = SIZES[SIZES.length - 1] as number
  console.log(`target: a ${last}-entry window within 1.5x of an empty one: ${worst.toFixed(2)}x at worst ${worst <= 1.5 ? '(met)' : '(NOT met)'}`)
  console.log(`the upgrade: a ${last}-entry window stored without totals was summed into them over its first ${upgrade.steps} decisions, the slowest ${(upgrade.slowest / 1000).toFixed(1)} ms`)
  console.log(`memory per limit entry at ${last}: ${(memory.entries ?? 0).toFixed(0)} B entry by entry, ${(memory.totals ?? 0).toFixed(0)} B with totals (${(memory.totalsOnly ?? 0).toFixed(0)} B of totals)`)
  console.log('machine: figures are noisy on a loaded machine; compare the columns of one run')
  await stores.totals.close()
  await stores.entries.close()
  stop()
}

main().catch((err) => { console.error(err); process.exit(1) })
