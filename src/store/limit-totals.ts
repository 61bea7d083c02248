// The running totals of a limit window, the memory store's copy of the Redis scripts' scheme (LIMITS in
// lua.ts; docs/development/money.md, Limit totals): per minute, quarter hour, hour, 6 hours, day and week (UTC, epoch-aligned), the amount of
// the window's entries in it, and of all. The amount from a start on is all of it when nothing is older, else
// the start's partial minute entry by entry, then at each level the whole slices to the next level's boundary
// (forward, or backward and taken from all): exact, and bounded by one minute's entries plus 35 totals
// whatever the window holds.

/** Slice lengths, each dividing the next: 1 min, 15 min, 1 h, 6 h, 1 day, 7 days (epoch-aligned). */
export const LEVELS: ReadonlyArray<readonly [string, number]> = Object.freeze([['m', 60_000], ['q', 900_000], ['h', 3_600_000], ['s', 21_600_000], ['d', 86_400_000], ['w', 604_800_000]] as const)
const MINUTE_MS = 60_000

/** The totals fields (`m<n>`, `q<n>`, ...) an entry scored scoreMs counts in. */
export function sliceFields (scoreMs: number): string[] {
  return LEVELS.map(([name, len]) => `${name}${Math.floor(scoreMs / len)}`)
}

/** What a window's totals must hold: per slice, the amount of the entries ('<amount>|<reference>') scored in it. */
export function sliceSums (entries: Iterable<{ member: string, score: number }>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const e of entries) {
    const amount = Number(e.member.slice(0, e.member.indexOf('|')))
    if (amount === 0) continue
    for (const f of [...sliceFields(e.score), 'c']) out[f] = (out[f] ?? 0) + amount
  }
  return out
}

/** The first multiple of `step` at or after `ms`. */
function ceilTo (ms: number, step: number): number {
  const n = Math.floor(ms / step)
  return n * step < ms ? n + 1 : n
}

/**
 * How to sum a window's entries scored startMs or later, its oldest scored firstMs and its latest lastMs: all of
 * them (total 'c') when none is older; else forward, the entries of [edgeFromMs, edgeToMs) one by one and the
 * fields; or backward, 'c' less those of the entries before the start, whichever reads fewer fields. The same
 * plan as `windowAmount` in lua.ts.
 */
export function windowPlan (startMs: number, firstMs: number, lastMs: number): { whole: true } | { whole: false, forward: boolean, edgeFromMs: number, edgeToMs: number, fields: string[] } {
  if (firstMs >= startMs) return { whole: true }
  const fwd: Array<[number, number]> = []
  const bwd: Array<[number, number]> = []
  const f0 = ceilTo(startMs, MINUTE_MS)
  const b0 = Math.floor(startMs / MINUTE_MS)
  let cf = f0
  let cb = b0
  LEVELS.forEach(([, len], i) => {
    const hi = Math.floor(lastMs / len)
    const lo = Math.floor(firstMs / len)
    const next = LEVELS[i + 1]
    if (next === undefined) {
      fwd.push([cf, hi])
      bwd.push([lo, cb - 1])
      return
    }
    const per = next[1] / len
    const f1 = ceilTo(cf * len, next[1])
    const b1 = Math.floor(cb * len / next[1])
    fwd.push([cf, Math.min(f1 * per - 1, hi)])
    bwd.push([Math.max(b1 * per, lo), cb - 1])
    cf = f1
    cb = b1
  })
  const size = (r: Array<[number, number]>): number => r.reduce((n, [a, b]) => n + Math.max(0, b - a + 1), 0)
  const forward = size(fwd) <= size(bwd)
  const fields: string[] = []
  ;(forward ? fwd : bwd).forEach(([a, b], i) => {
    for (let x = a; x <= b; x++) fields.push(`${(LEVELS[i] as readonly [string, number])[0]}${x}`)
  })
  return forward ? { whole: false, forward, edgeFromMs: startMs, edgeToMs: f0 * MINUTE_MS, fields } : { whole: false, forward, edgeFromMs: b0 * MINUTE_MS, edgeToMs: startMs, fields }
}

/** One window's totals: field -> amount, 'c' the amount of all; a total back at zero is removed. */
export class WindowTotals {
  readonly fields = new Map<string, number>()

  add (scoreMs: number, amount: number): void {
    if (amount === 0) return
    for (const f of [...sliceFields(scoreMs), 'c']) {
      const v = (this.fields.get(f) ?? 0) + amount
      if (v <= 0) this.fields.delete(f)
      else this.fields.set(f, v)
    }
  }

  /**
   * The amount of the entries scored startMs or later, of a window whose entries are scored firstMs to lastMs;
   * `edge` sums those of [fromMs, toMs) one by one.
   */
  amountFrom (startMs: number, firstMs: number, lastMs: number, edge: (fromMs: number, toMs: number) => number): number {
    if (lastMs < startMs) return 0
    const all = this.fields.get('c') ?? 0
    const plan = windowPlan(startMs, firstMs, lastMs)
    if (plan.whole) return all
    let sum = plan.edgeToMs > plan.edgeFromMs ? edge(plan.edgeFromMs, plan.edgeToMs) : 0
    for (const f of plan.fields) sum += this.fields.get(f) ?? 0
    return plan.forward ? sum : all - sum
  }
}
