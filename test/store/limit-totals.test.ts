// Limit windows' running totals (docs/development/money.md, Limit totals) against the sum they replace: random
// histories of approvals, whole and part reversals and deadline compensations, with probes over rolling and
// calendar windows in several zones and starts on and beside slice edges, on both stores. The oracle is a
// model of the approvals still counted, summed entry by entry; on Redis also the old computation (every
// window entry from the start on, summed). Then each store's totals are held against its own entries.
// LIMIT_TOTALS_SEED replays one seed.
import t from 'tap'
import type { Test } from 'tap'
import type { Redis } from 'ioredis'
import { MemoryStore } from '../../src/store/memory.js'
import type { RedisStore } from '../../src/store/redis.js'
import { Keys, limitMember } from '../../src/store/keys.js'
import { WindowTotals, sliceSums, windowPlan } from '../../src/store/limit-totals.js'
import { calendarStartMs, type CalendarPeriod } from '../../src/rules/window.js'
import { abandonInputOf, type AuthorizeInput, type Store } from '../../src/store/types.js'
import type { LimitCheck } from '../../src/domain/rule-hits.js'
import { intBetween, pick, seededRandom, type Random } from '../../src/sim/prng.js'
import { sharedRedisStore } from '../helpers/redis.js'
import { keySlot } from '../helpers/key-slot.js'
import { authInput, funded, limit } from './contract.js'

const SEEDS = process.env.LIMIT_TOTALS_SEED !== undefined ? [Number(process.env.LIMIT_TOTALS_SEED)] : [1, 2, 3]
const MIN = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/St_Johns', 'Australia/Lord_Howe', 'Pacific/Chatham']
/** a Saturday evening before Europe's spring DST change */
const T0 = Date.UTC(2026, 2, 28, 21, 59, 30)

interface Approval { input: AuthorizeInput, score: number, amount: number, live: boolean, reversible: boolean }

/** Two amount windows over the same approvals: a month's retention, and a day's (trimmed as the clock runs). */
const WINDOWS = [
  { ruleId: 'long', retainMs: 31 * DAY + HOUR, calendar: ['day', 'week', 'month'] as CalendarPeriod[] },
  { ruleId: 'short', retainMs: 25 * HOUR, calendar: ['day'] as CalendarPeriod[] }
]

function counted (ruleId: string, retainMs: number, over: Partial<LimitCheck> = {}): LimitCheck {
  return limit({ ruleId, measure: 'amount', per: 'urn', windowStartMs: 0, retainMs, max: Number.MAX_SAFE_INTEGER, code: '61', ...over })
}

/**
 * A start as a rule would give one, or any instant on or beside a slice edge, or inside the minute of an
 * approval (so the partial minute holds entries on either side of it), never before the retention.
 */
function startOf (rnd: Random, now: number, retainMs: number, calendar: CalendarPeriod[], scores: number[]): { start: number, what: string } {
  const kind = intBetween(rnd, 0, scores.length > 0 ? 4 : 3)
  let start: number
  let what: string
  if (kind === 0) {
    const unit = pick(rnd, [MIN, HOUR, DAY])
    const n = intBetween(rnd, 1, Math.floor(retainMs / unit))
    start = now - n * unit
    what = `rolling ${n * unit} ms`
  } else if (kind === 1) {
    const period = pick(rnd, calendar)
    const zone = pick(rnd, ZONES)
    start = calendarStartMs(period, now, zone)
    what = `${period} in ${zone}`
  } else if (kind === 2) {
    const unit = pick(rnd, [MIN, HOUR, DAY])
    start = Math.floor((now - rnd() * retainMs) / unit) * unit + pick(rnd, [-1, 0, 1])
    what = `edge of a ${unit} ms slice`
  } else if (kind === 3) {
    start = now - Math.floor(rnd() * retainMs)
    what = 'any instant'
  } else {
    const score = pick(rnd, scores)
    const minute = Math.floor(score / MIN) * MIN
    // either side of the approval, and where the partial minute is read from its start or up to the next
    start = pick(rnd, [score - 1, score, score + 1, score + intBetween(rnd, -MIN, MIN), minute + pick(rnd, [1, MIN / 2 - 1, MIN / 2, MIN / 2 + 1, MIN - 1])])
    what = `beside an approval at ${score}`
  }
  return { start: Math.max(start, now - retainMs), what }
}

function nextNow (rnd: Random, now: number): number {
  switch (intBetween(rnd, 0, 7)) {
    case 0: return now
    case 1: return now + 1
    case 2: return Math.floor(now / MIN) * MIN + MIN - intBetween(rnd, 0, 1)
    case 3: return Math.floor(now / HOUR) * HOUR + HOUR - intBetween(rnd, 0, 1)
    case 4: return Math.floor(now / DAY) * DAY + DAY - intBetween(rnd, 0, 1)
    case 5: return now + intBetween(rnd, 0, 2 * HOUR)
    case 6: return now + intBetween(rnd, 0, 30 * HOUR)
    default: return now - intBetween(rnd, 0, 5000) // another instance's clock, a little behind
  }
}

/** What a limit of the window sees from `start` on: a probe that any approval would exceed (max 0), read back. */
async function probe (store: Store, urn: string, l: LimitCheck, now: number): Promise<number> {
  const input = authInput(urn, { debitAmount: 1, nowMs: now, deadlineAtMs: Date.now() + 60_000, limits: [{ ...l, max: 0 }] })
  const r = await store.authorize(input)
  if (r.code !== '61') throw new Error(`probe answered ${r.code}`)
  const rec = await store.getDecision(urn, input.reference)
  return Number(rec?.limitSeen?.usedBefore)
}

async function history (t: Test, store: Store, seed: number, oldSum: ((key: string, start: number) => Promise<number>) | null): Promise<{ urn: string, probes: number }> {
  const rnd = seededRandom(seed)
  const urn = await funded(store, 4_000_000_000_000, `tot${seed}`)
  const keys = new Keys('')
  const approvals: Approval[] = []
  let now = T0
  let maxNow = now
  let probes = 0
  for (let step = 0; step < 260; step++) {
    now = Math.max(nextNow(rnd, now), T0)
    maxNow = Math.max(maxNow, now)
    const op = rnd()
    const reversible = approvals.filter((a) => a.live && a.reversible)
    if (op < 0.5) {
      const amount = pick(rnd, [0, 1, intBetween(rnd, 1, 999), intBetween(rnd, 1000, 1_000_000), 999_999_999])
      const input = authInput(urn, { debitAmount: amount, fingerprint: `fp-${amount}`, nowMs: now, deadlineAtMs: Date.now() + 60_000, limits: WINDOWS.map((w) => counted(w.ruleId, w.retainMs)) })
      const r = await store.authorize(input)
      if (r.code !== '00') throw new Error(`seed ${seed} step ${step}: approval answered ${r.code} ${r.reason}`)
      approvals.push({ input, score: now, amount, live: true, reversible: true })
    } else if (op < 0.6 && reversible.length > 0) {
      const a = pick(rnd, reversible)
      await store.reverse(urn, a.input.reference, null)
      a.live = false
    } else if (op < 0.7 && reversible.length > 0) {
      const a = pick(rnd, reversible.filter((x) => x.amount >= 2).concat(reversible.slice(0, 1)))
      if (a.amount >= 2) {
        const part = intBetween(rnd, 1, a.amount - 1)
        await store.reverse(urn, a.input.reference, part)
        a.amount -= part
        a.reversible = false
      }
    } else if (op < 0.75 && reversible.length > 0) {
      const a = pick(rnd, reversible)
      await store.abandon({ ...abandonInputOf(a.input), attempt: a.input.attempt })
      a.live = false
    } else {
      const w = pick(rnd, WINDOWS)
      const { start, what } = startOf(rnd, maxNow, w.retainMs, w.calendar, approvals.filter((a) => a.live).map((a) => a.score))
      const live = approvals.filter((a) => a.live && a.score >= start)
      const expected = live.reduce((s, a) => s + a.amount, 0)
      const got = await probe(store, urn, counted(w.ruleId, w.retainMs, { windowStartMs: start }), now)
      const countGot = await probe(store, urn, counted(w.ruleId, w.retainMs, { windowStartMs: start, measure: 'count' }), now)
      probes++
      if (got !== expected || countGot !== live.length) {
        t.fail(`seed ${seed} step ${step}, ${w.ruleId} window from ${start} (${what}): amount ${got}, count ${countGot}; the approvals counted sum to ${expected} over ${live.length}`)
        return { urn, probes }
      }
      if (oldSum !== null) {
        const old = await oldSum(keys.limit(urn, '4321', { ruleId: w.ruleId, per: 'urn' }), start)
        if (old !== expected) t.fail(`seed ${seed} step ${step}: the old computation gives ${old}, the model ${expected}`)
      }
    }
  }
  t.pass(`seed ${seed}: ${probes} probes of amount and count agree with the approvals counted`)
  return { urn, probes }
}

t.test('the plan: the partial minute entry by entry and the totals give the sum of every entry from the start on', async (t) => {
  for (const seed of SEEDS) {
    const rnd = seededRandom(seed)
    for (let round = 0; round < 300; round++) {
      const totals = new WindowTotals()
      const entries: Array<{ score: number, amount: number }> = []
      const base = T0 + intBetween(rnd, 0, 40) * DAY
      for (let i = intBetween(rnd, 0, 60); i > 0; i--) {
        const score = pick(rnd, [base - intBetween(rnd, 0, 32 * DAY), Math.floor(base / DAY) * DAY - pick(rnd, [0, 1, MIN, HOUR]), Math.floor(base / MIN) * MIN])
        const amount = intBetween(rnd, 0, 10_000)
        entries.push({ score, amount })
        totals.add(score, amount)
      }
      const first = entries.reduce((m, e) => Math.min(m, e.score), Infinity)
      const last = entries.reduce((m, e) => Math.max(m, e.score), -Infinity)
      for (let p = 0; p < 20; p++) {
        const unit = pick(rnd, [MIN, HOUR, DAY])
        const start = pick(rnd, [base - intBetween(rnd, 0, 33 * DAY), Math.floor(base / unit) * unit + pick(rnd, [-1, 0, 1])])
        const brute = entries.reduce((s, e) => e.score >= start ? s + e.amount : s, 0)
        const got = totals.amountFrom(start, first, last, (from, to) => entries.reduce((s, e) => e.score >= from && e.score < to ? s + e.amount : s, 0))
        if (got !== brute) {
          t.fail(`seed ${seed} round ${round}: from ${start} ${got}, every entry ${brute}`)
          return
        }
        const plan = windowPlan(start, first, last)
        const weeks = Math.floor(last / (7 * DAY)) - Math.floor(first / (7 * DAY)) + 1
        const fields = plan.whole ? 0 : plan.plus.length + plan.less.length
        // at each level below the last at most half its slices in the next level's, at the last half the weeks spanned
        if (!plan.whole && (plan.edgeToMs - plan.edgeFromMs >= MIN || plan.edgeToMs < plan.edgeFromMs || fields > 7 + 2 + 3 + 2 + 3 + Math.floor(weeks / 2))) {
          t.fail(`plan from ${start} over ${first}..${last} is not bounded: edge ${plan.edgeFromMs}..${plan.edgeToMs}, ${fields} fields`)
          return
        }
      }
    }
  }
  t.pass('300 random windows of each seed, 20 starts each')
})

t.test('memory store: random histories against the approvals counted', async (t) => {
  for (const seed of SEEDS) {
    const store = new MemoryStore()
    const { urn } = await history(t, store, seed, null)
    const keys = new Keys('')
    const mem = store as unknown as { windows: Map<string, Array<{ member: string, score: number }>>, windowTotals: Map<string, WindowTotals> }
    for (const w of WINDOWS) {
      const key = keys.limit(urn, '4321', { ruleId: w.ruleId, per: 'urn' })
      t.same(Object.fromEntries(mem.windowTotals.get(key)?.fields ?? []), sliceSums(mem.windows.get(key) ?? []), `seed ${seed}: the ${w.ruleId} window's totals hold exactly its entries`)
    }
  }
})

t.test('Redis store: random histories against the approvals counted and the old computation', async (t) => {
  const store = await sharedRedisStore(t)
  const client = store.client as Redis
  const keys = new Keys((store as unknown as { keys: Keys }).keys.prefix)
  const oldSum = async (key: string, start: number): Promise<number> =>
    (await client.zrangebyscore(keys.prefix + key, start, '+inf')).reduce((s, m) => s + Number(m.slice(0, m.indexOf('|'))), 0)
  for (const seed of SEEDS) {
    const { urn } = await history(t, store, seed, oldSum)
    for (const w of WINDOWS) {
      const key = keys.limit(urn, '4321', { ruleId: w.ruleId, per: 'urn' })
      const flat = await client.zrange(key, 0, -1, 'WITHSCORES')
      const entries: Array<{ member: string, score: number }> = []
      for (let i = 0; i < flat.length; i += 2) entries.push({ member: flat[i] as string, score: Number(flat[i + 1]) })
      const { v, ...fields } = await client.hgetall(`${key}:t`)
      t.equal(v, '1', 'the totals are marked as kept')
      t.same(Object.fromEntries(Object.entries(fields).map(([f, x]) => [f, Number(x)])), sliceSums(entries), `seed ${seed}: the ${w.ruleId} window's totals hold exactly its entries`)
      // absolute instants: two PTTL replies would be read a moment apart
      const [wat, tat] = await Promise.all([client.call('PEXPIRETIME', key), client.call('PEXPIRETIME', `${key}:t`)]) as [number, number]
      // the script copies the window's PTTL, read in whole milliseconds, so the two may stand one apart; either
      // way is safe: totals found without their window are dropped, a window found without totals is summed anew
      t.ok(wat > Date.now() && Math.abs(tat - wat) <= 1, `the totals expire with the window (${tat}, ${wat})`)
      t.equal(keySlot(`${key}:t`), keySlot(key), 'on the window\'s slot')
    }
  }
})

/**
 * Approvals on and one millisecond beside minute edges, and in the middle of a minute, with older history
 * (so the start falls inside the window's history): every start in and around those minutes, including half a
 * minute in (where the partial minute is read up to the next one instead of from its own start).
 */
async function minuteEdges (t: Test, store: Store): Promise<void> {
  const urn = await funded(store, 1_000_000_000, 'edges')
  const X = Math.floor(T0 / MIN) * MIN + 10 * MIN
  const scores = [X - 3 * DAY, X - MIN - 1, X - MIN, X - MIN + 1, X - MIN / 2, X - 2, X - 1, X, X + 1, X + MIN / 2, X + MIN - 1, X + MIN]
  const approvals = scores.map((score, i) => ({ score, amount: 10 ** (i % 9) + i }))
  const l = counted('edges', 31 * DAY + HOUR)
  for (const a of approvals) {
    const r = await store.authorize(authInput(urn, { debitAmount: a.amount, nowMs: a.score, deadlineAtMs: Date.now() + 60_000, limits: [l] }))
    if (r.code !== '00') throw new Error(`approval answered ${r.code}`)
  }
  let probes = 0
  for (const score of scores.slice(1)) {
    const minute = Math.floor(score / MIN) * MIN
    for (const start of [score - 1, score, score + 1, minute + MIN / 2 - 1, minute + MIN / 2, minute + MIN / 2 + 1, minute + MIN - 1]) {
      const expected = approvals.reduce((sum, a) => a.score >= start ? sum + a.amount : sum, 0)
      const got = await probe(store, urn, { ...l, windowStartMs: start }, X + MIN)
      probes++
      if (got !== expected) {
        t.fail(`from ${start} (${start - X} ms from a minute edge): ${got}, the approvals sum to ${expected}`)
        return
      }
    }
  }
  t.pass(`${probes} starts around approvals on and beside minute edges`)
}

t.test('memory store: starts in minutes holding approvals, on and beside their edges', async (t) => {
  await minuteEdges(t, new MemoryStore())
})

t.test('Redis store: starts in minutes holding approvals, on and beside their edges', async (t) => {
  await minuteEdges(t, await sharedRedisStore(t))
})

t.test('Redis store: a window stored before totals were kept is summed into them at its first check; nothing is under-counted', async (t) => {
  const store = await sharedRedisStore(t) as RedisStore
  const client = store.client as Redis
  const keys = (store as unknown as { keys: Keys }).keys
  const urn = await funded(store, 1_000_000, 'mig')
  const now = Date.now()
  const l = counted('day', 25 * HOUR, { windowStartMs: now - DAY, max: 1000 })
  const key = keys.limit(urn, '4321', l)
  // the old layout: the window's entries, no totals
  const old = [[now - 2 * DAY, 500], [now - 20 * HOUR, 300], [now - 90 * MIN, 250], [now - 10_000, 200]] as const
  for (const [i, [score, amount]] of old.entries()) await client.zadd(key, score, limitMember(amount, `old${i}`))
  await client.pexpire(key, 25 * HOUR)
  // a reversal before any check adjusts the window alone: the totals are not started half-way
  const oldDecision = authInput(urn, { debitAmount: 200, reference: 'old3' })
  await client.set(keys.decision(urn, 'old3'), JSON.stringify({
    urn, reference: 'old3', last4: '4321', attempt: oldDecision.attempt, code: '00', reason: 'approved', ruleId: null, debit: '200', held: '200', released: '0',
    fingerprint: oldDecision.fingerprint, shadowLimitHits: {}, limitEntries: [[key, limitMember(200, 'old3')]], arrivedAtMs: now - 10_000, deadlineAtMs: now,
    decidedAtMs: now - 10_000, answeredOnDeadline: false, decidedCode: null, reversal: null, meta: null
  }), 'EX', 3600)
  await store.reverse(urn, 'old3', 50)
  t.equal(await client.exists(`${key}:t`), 0, 'no totals from a reversal alone')
  // 300 + 250 + 150 in the day: 300 more passes (1000), 301 would not
  t.match(await store.authorize(authInput(urn, { debitAmount: 301, limits: [l] })), { code: '61' }, 'the old entries count')
  t.match(await store.authorize(authInput(urn, { debitAmount: 300, limits: [l] })), { code: '00' })
  const { v, ...fields } = await client.hgetall(`${key}:t`)
  t.equal(v, '1')
  const sum = (prefix: string): number => Object.entries(fields).filter(([f]) => f.startsWith(prefix)).reduce((s, [, x]) => s + Number(x), 0)
  t.equal(await client.zscore(key, limitMember(500, 'old0')), null, 'the entry past the retention was trimmed by the commit')
  t.equal(sum('m'), 300 + 250 + 150 + 300, 'every entry kept, old and new, is in the minute totals')
  t.equal(sum('h'), sum('m'))
  t.equal(sum('d'), sum('m'))
  t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [l] })), { code: '61' }, 'the day is full')
  // totals lost before their window (never expected: both expire together) are summed again
  await client.del(`${key}:t`)
  t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [l] })), { code: '61' }, 'still full')
  t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [{ ...l, windowStartMs: now - 5_000 }] })), { code: '00' }, 'and a shorter window sees the new approval alone')
})

/**
 * A rule's measure changed under the same id: a count is read from the window's set, so a count window keeps no
 * totals, and drops any its rule kept as an amount; turned back to an amount, the rule sums its window anew.
 * Totals left as they were would miss the approvals counted in between, and let the amount past its max.
 */
async function measureChanged (t: Test, store: Store, totals?: { exists: (key: string) => Promise<boolean>, key: (urn: string, l: LimitCheck) => string }): Promise<void> {
  const urn = await funded(store, 1_000_000, 'measure')
  const now = Date.now()
  const amount = counted('switch', 25 * HOUR, { windowStartMs: now - DAY, max: 1_000_000 })
  const count = { ...amount, measure: 'count' as const, max: 3, code: '65' as const }
  t.match(await store.authorize(authInput(urn, { debitAmount: 400, limits: [amount] })), { code: '00' }, 'an amount approval: its window keeps totals')
  if (totals !== undefined) t.ok(await totals.exists(totals.key(urn, amount)), 'the totals are there')
  t.match(await store.authorize(authInput(urn, { debitAmount: 100, limits: [count] })), { code: '00' }, 'the rule now counts: 2 of 3')
  if (totals !== undefined) t.notOk(await totals.exists(totals.key(urn, amount)), 'a count window keeps no totals')
  t.match(await store.authorize(authInput(urn, { debitAmount: 200, limits: [count] })), { code: '00' }, '3 of 3')
  t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [count] })), { code: '65' }, 'a fourth is over the count')
  // 400 + 100 + 200 in the window: 50 more reaches 750, 51 would not
  const back = { ...amount, max: 750 }
  t.match(await store.authorize(authInput(urn, { debitAmount: 51, limits: [back] })), { code: '61' }, 'an amount again: the approvals counted in between are summed')
  t.match(await store.authorize(authInput(urn, { debitAmount: 50, limits: [back] })), { code: '00' }, 'up to its max')
  t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [back] })), { code: '61' }, 'and not past it')
}

t.test('memory store: a rule turned from an amount to a count and back sums its window exactly', async (t) => {
  await measureChanged(t, new MemoryStore())
})

t.test('Redis store: a count window keeps no totals; a rule turned back to an amount sums its window anew', async (t) => {
  const store = await sharedRedisStore(t) as RedisStore
  const client = store.client as Redis
  const keys = (store as unknown as { keys: Keys }).keys
  await measureChanged(t, store, { exists: async (key) => await client.exists(`${key}:t`) === 1, key: (urn, l) => keys.limit(urn, '4321', l) })
})

t.test('Redis store: a window\'s expiry is set a slack past its retention, and left alone within the slack', async (t) => {
  const store = await sharedRedisStore(t) as RedisStore
  const client = store.client as Redis
  const keys = (store as unknown as { keys: Keys }).keys
  const urn = await funded(store, 1_000_000, 'slack')
  const expiry = async (key: string): Promise<number> => Number(await client.call('PEXPIRETIME', key))
  // the slack: an eighth of the retention, at most an hour
  for (const [retainMs, slackMs] of [[MIN, MIN / 8], [25 * HOUR, HOUR]] as const) {
    const l = counted(`slack-${retainMs}`, retainMs, { windowStartMs: 0 })
    const key = keys.limit(urn, '4321', l)
    const commit = async (): Promise<[number, number]> => {
      const before = Date.now()
      t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [l] })), { code: '00' })
      return [before, Date.now()]
    }
    const [b1, a1] = await commit()
    const set = await expiry(key)
    // Redis and this process read the same clock: the expiry was set between the two readings
    t.ok(set >= b1 + retainMs + slackMs && set <= a1 + retainMs + slackMs, `retention ${retainMs} ms: the window kept ${set - b1} ms from the commit (${retainMs} + ${slackMs})`)
    t.equal(await expiry(`${key}:t`), set, 'its totals with it')
    if (retainMs > MIN) {
      // an hour of slack: the next commit comes well within it
      await commit()
      t.equal(await expiry(key), set, 'a commit within the slack leaves it')
    }
    // less than the retention left: the next commit sets it again
    await client.pexpire(key, retainMs - 1000)
    const [b2, a2] = await commit()
    const again = await expiry(key)
    t.ok(again >= b2 + retainMs + slackMs && again <= a2 + retainMs + slackMs, `less than the retention left: set again (${again - b2} ms)`)
    t.equal(await expiry(`${key}:t`), again, 'its totals with it')
  }
})

t.test('Redis store: a large window stored before totals is summed into them over several decisions, exact at every step', async (t) => {
  const store = await sharedRedisStore(t) as RedisStore
  const client = store.client as Redis
  const keys = (store as unknown as { keys: Keys }).keys
  const rnd = seededRandom(SEEDS[0] as number)
  const urn = await funded(store, 4_000_000_000_000, 'mig2')
  const now = Date.now()
  const retainMs = 3 * DAY
  const l = counted('big', retainMs)
  const key = keys.limit(urn, '4321', l)
  // 2,600 entries over two days, 1,200 of them at one instant (more than a decision sums at once)
  const model = new Map<string, { score: number, amount: number }>()
  const same = now - DAY - 12_345
  for (let i = 0; i < 2600; i++) {
    const ref = `old${i}`
    const score = i < 1200 ? same : now - intBetween(rnd, 1000, 2 * DAY)
    model.set(ref, { score, amount: intBetween(rnd, 0, 5000) })
  }
  for (const [ref, e] of model) await client.zadd(key, e.score, limitMember(e.amount, ref))
  await client.pexpire(key, retainMs)
  // decisions of some old entries, so they can be reversed while the totals are being summed
  const reversible = [...model.keys()].filter((_, i) => i % 97 === 0)
  for (const ref of reversible) {
    const e = model.get(ref) as { score: number, amount: number }
    await client.set(keys.decision(urn, ref), JSON.stringify({
      urn, reference: ref, last4: '4321', attempt: 'a', code: '00', reason: 'approved', ruleId: null, debit: String(e.amount), held: String(e.amount), released: '0',
      fingerprint: 'f', shadowLimitHits: {}, limitEntries: [[key, limitMember(e.amount, ref)]], arrivedAtMs: e.score, deadlineAtMs: e.score,
      decidedAtMs: e.score, answeredOnDeadline: false, decidedCode: null, reversal: null, meta: null
    }), 'EX', 3600)
  }
  const firstSum = [...model.values()].reduce((s, e) => s + e.amount, 0)
  t.equal(await probe(store, urn, { ...l, windowStartMs: now - 3 * DAY }, Date.now()), firstSum, 'the first check counts every old entry')
  t.ok(await client.hget(`${key}:t`, 'r') !== null && await client.hget(`${key}:t`, 'v') === null, 'with the totals summed part of the way')
  let steps = 0
  for (; steps < 40; steps++) {
    const op = rnd()
    if (op < 0.3) {
      const amount = intBetween(rnd, 0, 5000)
      const input = authInput(urn, { debitAmount: amount, fingerprint: `fp-${amount}`, limits: [l] })
      t.match(await store.authorize(input), { code: '00' })
      model.set(input.reference, { score: input.nowMs, amount })
    } else if (op < 0.5 && reversible.length > 0) {
      const ref = reversible.splice(intBetween(rnd, 0, reversible.length - 1), 1)[0] as string
      const e = model.get(ref) as { score: number, amount: number }
      const part = e.amount >= 2 && rnd() < 0.5 ? intBetween(rnd, 1, e.amount - 1) : null
      await store.reverse(urn, ref, part)
      if (part === null) model.delete(ref)
      else e.amount -= part
    } else {
      const start = pick(rnd, [same, same + 1, now - intBetween(rnd, 0, 2 * DAY), Math.floor(now / HOUR) * HOUR - DAY])
      const expected = [...model.values()].reduce((s, e) => e.score >= start ? s + e.amount : s, 0)
      const got = await probe(store, urn, { ...l, windowStartMs: start }, Date.now())
      if (got !== expected) {
        t.fail(`step ${steps} (${await client.hget(`${key}:t`, 'r') ?? 'complete'}): from ${start} ${got}, the entries sum to ${expected}`)
        return
      }
    }
  }
  t.equal(await client.hget(`${key}:t`, 'v'), '1', `the totals were complete after ${steps} decisions`)
  const flat = await client.zrange(key, 0, -1, 'WITHSCORES')
  const entries: Array<{ member: string, score: number }> = []
  for (let i = 0; i < flat.length; i += 2) entries.push({ member: flat[i] as string, score: Number(flat[i + 1]) })
  const { v: _v, ...fields } = await client.hgetall(`${key}:t`)
  t.same(Object.fromEntries(Object.entries(fields).map(([f, x]) => [f, Number(x)])), sliceSums(entries), 'and hold exactly the window\'s entries')
  const [wat, tat] = await Promise.all([client.call('PEXPIRETIME', key), client.call('PEXPIRETIME', `${key}:t`)]) as [number, number]
  t.ok(Math.abs(tat - wat) <= 1, `expiring with the window, to the millisecond of its PTTL (${tat}, ${wat})`)
})
