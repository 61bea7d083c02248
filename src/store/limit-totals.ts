// The running totals of a limit window, the memory store's copy of the Redis scripts' scheme (lua/includes/limits.lua;
// docs/development/money.md, Limit totals): per minute, quarter hour, hour, 6 hours, day and week (UTC, epoch-aligned), the amount of
// the window's entries in it, and of all. The amount from a start on is all of it when nothing is older, else
// the start's partial minute entry by entry, then at each level the whole slices up to the next level's
// boundary (added) or down to the previous one (taken off), whichever reads fewer: exact, and bounded by half a
// minute's entries plus 17 totals and half the weeks spanned whatever the window holds.

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

/** A sum read from the totals: the edge's entries and the fields added, the fields under `less` taken off. */
export interface WindowSum {
  whole: false
  /** the entries of [edgeFromMs, edgeToMs) are added (edgeSign 1) or taken off (-1); none when the two are equal */
  edgeFromMs: number
  edgeToMs: number
  edgeSign: 1 | -1
  /** whether 'c', the amount of all, is the sum's base */
  all: boolean
  plus: string[]
  less: string[]
}

/**
 * How to sum a window's entries scored startMs or later, its oldest scored firstMs and its latest lastMs: all of
 * them (total 'c') when none is older; else the start's partial minute entry by entry, taken off down from its
 * own minute or added up to the next, whichever part is shorter; then at each level the whole slices up to the
 * next level's boundary (added) or down to the previous one (taken off), whichever reads fewer fields; at the
 * last level up to the latest entry, or 'c' less those down to the oldest. Slices outside [firstMs, lastMs]
 * hold nothing and are not read: at most 7 + 2 + 3 + 2 + 3 fields, half the weeks spanned, the start's minute
 * (its entries are read only if it holds some), and half a minute's entries. The same plan as `windowAmount` in
 * lua/includes/limits.lua.
 */
export function windowPlan (startMs: number, firstMs: number, lastMs: number): { whole: true } | WindowSum {
  if (firstMs >= startMs) return { whole: true }
  const part = startMs % MINUTE_MS
  // k: every entry from slice k of the current level on is still to be summed
  let k = (startMs - part) / MINUTE_MS
  const down = part < MINUTE_MS / 2
  const edge = down
    ? { edgeFromMs: startMs - part, edgeToMs: startMs, edgeSign: -1 as const }
    : { edgeFromMs: startMs, edgeToMs: startMs - part + MINUTE_MS, edgeSign: 1 as const }
  if (!down) k++
  const plus: string[] = []
  const less: string[] = []
  let all = false
  LEVELS.forEach(([name, len], i) => {
    const lo = Math.floor(firstMs / len)
    const hi = Math.floor(lastMs / len)
    const next = LEVELS[i + 1]
    const per = next === undefined ? 0 : next[1] / len
    // up: slices k .. above - 1 to the next boundary (the last level: to the latest entry's); down: from the
    // previous boundary (the last level: the oldest entry's) to k - 1, taken off what follows
    const below = next === undefined ? lo : k - (k % per)
    const above = next === undefined ? hi + 1 : (k % per === 0 ? k : below + per)
    const [a, b] = [Math.max(k, lo), Math.min(above - 1, hi)]
    const [c, d] = [Math.max(below, lo), Math.min(k - 1, hi)]
    if (Math.max(0, b - a + 1) <= Math.max(0, d - c + 1)) {
      for (let x = a; x <= b; x++) plus.push(`${name}${x}`)
      k = above
    } else {
      for (let x = c; x <= d; x++) less.push(`${name}${x}`)
      k = below
      all = next === undefined
    }
    if (next !== undefined) k /= per
  })
  return { whole: false, ...edge, all, plus, less }
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
    let sum = plan.all ? all : 0
    // the start's partial minute, read only if its total shows entries in it
    if (plan.edgeToMs > plan.edgeFromMs && this.fields.has(`m${Math.floor(startMs / MINUTE_MS)}`)) sum += plan.edgeSign * edge(plan.edgeFromMs, plan.edgeToMs)
    for (const f of plan.plus) sum += this.fields.get(f) ?? 0
    for (const f of plan.less) sum -= this.fields.get(f) ?? 0
    return sum
  }
}
