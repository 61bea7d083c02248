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

/**
 * Small numbers for the few strings a replay meets again and again (rule ids, control kinds), so that state
 * kept per rule or kind is an array slot: a lookup compares no strings, and reads no string of the state it
 * finds. A replay's state is spread over many customers and mostly out of the processor's caches; every
 * object a lookup reads on the way costs a trip to memory.
 */
class Codes {
  private readonly list: string[] = []

  of (s: string): number {
    const list = this.list
    for (let i = 0; i < list.length; i++) if (list[i] === s) return i
    list.push(detached(s))
    return list.length - 1
  }
}

// One list each for the process: a backtest runs once per process, its two rule sets holding at most a few
// thousand ids (rulesMax each) and the kinds a handful.
const ruleCodes = new Codes()
const kindCodes = new Codes()

/** The window of a rule (by its code) in `ws`, added when missing. */
function windowOf (ws: Array<ReplayWindow | undefined>, rule: number): ReplayWindow {
  let w = ws[rule]
  if (w === undefined) {
    // filled up to `rule` first: the array stays without holes
    while (ws.length < rule) ws.push(undefined)
    ws[rule] = w = new ReplayWindow()
  }
  return w
}

/**
 * A card's last four digits as a number (their count too, so 0123 is not 123), to tell cards apart without
 * reading the strings kept; -1 for any other text, told apart by the text itself.
 */
function cardKey (last4: string): number {
  if (last4.length === 0 || last4.length > 9) return -1
  let n = last4.length
  for (let i = 0; i < last4.length; i++) {
    const d = last4.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/** One card's limit windows (per rule) and card-control daily totals (per control kind). */
export class CardState {
  /** by rule code */
  private readonly windows: Array<ReplayWindow | undefined> = []
  /** the first control kind's daily total and its kind code, kept in the card's own object (most cards have one) */
  private firstDay: DayTotal | null = null
  private firstDayCode = -1
  /** the others, by kind code */
  private readonly days: Array<DayTotal | undefined> = []

  constructor (readonly last4: string, readonly key: number) {}

  window (ruleId: string): ReplayWindow {
    return windowOf(this.windows, ruleCodes.of(ruleId))
  }

  dayTotal (kind: string): DayTotal {
    const code = kindCodes.of(kind)
    if (code === this.firstDayCode) return this.firstDay as DayTotal
    let d = this.days[code]
    if (d === undefined) {
      d = new DayTotal(this.last4, detached(kind))
      if (this.firstDay === null) {
        this.firstDay = d
        this.firstDayCode = code
        return d
      }
      while (this.days.length < code) this.days.push(undefined)
      this.days[code] = d
    }
    return d
  }
}

/**
 * One customer's windows (per card or its own, and rule) and card-control daily totals (per card and control
 * kind) in one rule set's replay. A replay looks the customer up once per decision, and the card once; a
 * customer has a few cards, found along a short list by a number (cardKey) rather than by maps that would
 * hash each decision's new strings again.
 */
export class CustomerState {
  /** by rule code */
  private readonly own: Array<ReplayWindow | undefined> = []
  /** the first card, kept in the customer's own object (most have one): one object fewer to read */
  private first: CardState | null = null
  private readonly more: CardState[] = []

  card (last4: string): CardState {
    // a line written by another tool may hold anything there: told apart as text, as before
    const key = typeof last4 === 'string' ? cardKey(last4) : -1
    const first = this.first
    if (first !== null && (key >= 0 ? first.key === key : first.key < 0 && first.last4 === last4)) return first
    const cs = this.more
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i] as CardState
      if (key >= 0 ? c.key === key : c.key < 0 && c.last4 === last4) return c
    }
    const c = new CardState(detached(last4), key)
    if (first === null) this.first = c
    else cs.push(c)
    return c
  }

  /** A window of the customer's own (not of a card). */
  ownWindow (ruleId: string): ReplayWindow {
    return windowOf(this.own, ruleCodes.of(ruleId))
  }

  /** `last4` null for a window of the customer's own */
  window (last4: string | null, ruleId: string): ReplayWindow {
    return last4 === null ? this.ownWindow(ruleId) : this.card(last4).window(ruleId)
  }

  dayTotal (last4: string, kind: string): DayTotal {
    return this.card(last4).dayTotal(kind)
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
