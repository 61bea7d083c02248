// Limit windows and card-control daily totals rebuilt by a replay, with the store's semantics: only
// approvals count, and a check asks whether this transaction would take the window over its max.
// Running totals keep the cost of a check independent of a customer's history.
import { detached } from './entry-line.js'

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

/** Approved debits of one card and control kind in the current local day. */
export class DayTotal {
  /** the local day (YYYYMMDD) the total is of */
  private day = ''
  private total = 0

  constructor (readonly last4: string, readonly kind: string) {}

  /** the total of that local day before this transaction */
  on (day: string): number {
    return this.day === day ? this.total : 0
  }

  add (day: string, amount: number): void {
    if (this.day === day) this.total += amount
    // A later day starts again from zero; an entry of an earlier day arriving late no longer matters.
    else if (this.day < day) { this.day = day; this.total = amount }
  }
}

/** A limit window with what it is the window of. */
interface ScopedWindow { scope: string, ruleId: string, window: ReplayWindow }

/**
 * One customer's windows (per card or its own, and rule) and card-control daily totals (per card and control
 * kind) in one rule set's replay. A replay looks the customer up once per decision; a customer has a few
 * cards and rules, so their state is found by comparing strings along a short list, rather than by maps
 * that would hash each decision's new strings again.
 */
export class CustomerState {
  private readonly windows: ScopedWindow[] = []
  private readonly days: DayTotal[] = []

  /** `last4` null for a window of the customer's own */
  window (last4: string | null, ruleId: string): ReplayWindow {
    // '' cannot be a card's last four digits, so it stands for the customer's own scope.
    const scope = last4 ?? ''
    const ws = this.windows
    for (let i = 0; i < ws.length; i++) {
      const w = ws[i] as ScopedWindow
      if (w.ruleId === ruleId && w.scope === scope) return w.window
    }
    const window = new ReplayWindow()
    ws.push({ scope: detached(scope), ruleId: detached(ruleId), window })
    return window
  }

  dayTotal (last4: string, kind: string): DayTotal {
    const ds = this.days
    for (let i = 0; i < ds.length; i++) {
      const d = ds[i] as DayTotal
      if (d.kind === kind && d.last4 === last4) return d
    }
    const d = new DayTotal(detached(last4), detached(kind))
    ds.push(d)
    return d
  }
}

/** The customers of one rule set's replay, by urn. */
export class ReplayState {
  private readonly customers = new Map<string, CustomerState>()

  customer (urn: string): CustomerState {
    let c = this.customers.get(urn)
    if (c === undefined) this.customers.set(detached(urn), c = new CustomerState())
    return c
  }
}
