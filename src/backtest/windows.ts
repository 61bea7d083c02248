// Limit windows and card-control daily totals rebuilt by a replay, with the store's semantics: only
// approvals count, and a check asks whether this transaction would take the window over its max.
// Running totals keep the cost of a check independent of a customer's history.

/** One limit window (one rule, one urn or card): approved entries in time order with the total in the window. */
export class ReplayWindow {
  private readonly times: number[] = []
  private readonly amounts: number[] = []
  /** first entry still kept */
  private start = 0
  /** first entry inside the window last asked about; count and amount are the totals from here to the end */
  private from = 0
  /** the window's start last asked about */
  private startMs = -Infinity
  count = 0
  amount = 0

  /** Moves the window to start at windowStartMs (it moves back too: entries may arrive slightly out of order). */
  seek (windowStartMs: number): void {
    this.startMs = windowStartMs
    const t = this.times
    while (this.from < t.length && (t[this.from] as number) < windowStartMs) {
      this.count--
      this.amount -= this.amounts[this.from] as number
      this.from++
    }
    while (this.from > this.start && (t[this.from - 1] as number) >= windowStartMs) {
      this.from--
      this.count++
      this.amount += this.amounts[this.from] as number
    }
  }

  /** Adds an approval at atMs; forgets entries older than keepFromMs that are outside the window. */
  add (atMs: number, amount: number, keepFromMs: number): void {
    const t = this.times
    let i = t.length
    while (i > this.start && (t[i - 1] as number) > atMs) i--
    if (i === t.length) {
      t.push(atMs)
      this.amounts.push(amount)
    } else {
      t.splice(i, 0, atMs)
      this.amounts.splice(i, 0, amount)
    }
    if (atMs >= this.startMs) {
      this.count++
      this.amount += amount
    } else {
      this.from++
    }
    while (this.start < this.from && (t[this.start] as number) < keepFromMs) this.start++
    if (this.start > 64 && this.start * 2 > t.length) {
      t.splice(0, this.start)
      this.amounts.splice(0, this.start)
      this.from -= this.start
      this.start = 0
    }
  }
}

/**
 * The windows of one rule set's replay, by customer, then card, then rule. Nested maps keyed by the strings
 * as parsed (whose hashes V8 keeps) rather than one joined key, which would be a new string to hash on every
 * lookup: the lookups are most of a replay's own work.
 */
export class ReplayWindows {
  private readonly customers = new Map<string, Map<string, Map<string, ReplayWindow>>>()

  /** `last4` null for a window per customer */
  get (urn: string, last4: string | null, ruleId: string): ReplayWindow {
    let scopes = this.customers.get(urn)
    if (scopes === undefined) this.customers.set(urn, scopes = new Map())
    // '' cannot be a card's last four digits, so it stands for the customer's own scope.
    const scope = last4 ?? ''
    let rules = scopes.get(scope)
    if (rules === undefined) scopes.set(scope, rules = new Map())
    let w = rules.get(ruleId)
    if (w === undefined) rules.set(ruleId, w = new ReplayWindow())
    return w
  }
}

/** Approved debits of one card and control kind in the current local day. */
export class DailyTotals {
  private readonly cards = new Map<string, Map<string, Map<string, { day: string, total: number }>>>()

  private entry (urn: string, last4: string, kind: string): { day: string, total: number } {
    let cards = this.cards.get(urn)
    if (cards === undefined) this.cards.set(urn, cards = new Map())
    let kinds = cards.get(last4)
    if (kinds === undefined) cards.set(last4, kinds = new Map())
    let e = kinds.get(kind)
    if (e === undefined) kinds.set(kind, e = { day: '', total: 0 })
    return e
  }

  /** the total of that local day (YYYYMMDD) before this transaction */
  get (urn: string, last4: string, kind: string, day: string): number {
    const e = this.entry(urn, last4, kind)
    return e.day === day ? e.total : 0
  }

  add (urn: string, last4: string, kind: string, day: string, amount: number): void {
    const e = this.entry(urn, last4, kind)
    if (e.day === day) e.total += amount
    // A later day starts again from zero; an entry of an earlier day arriving late no longer matters.
    else if (e.day < day) { e.day = day; e.total = amount }
  }
}
