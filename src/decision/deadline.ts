// The deadline guard of the decision endpoint: whatever the work is doing, an answer leaves by the deadline.
// When the deadline comes first, the request's abort hook runs (synchronously, so a decision that may have
// committed hands its compensation to the store before the 05 is written: docs/development/money.md), then
// the deadline answer is given.
//
// One timer for all requests in flight, not one each: they are kept in a list ordered by deadline, and the
// timer is set for the first of them. Deadlines are the arrival time plus one configured budget, so a
// request almost always goes to the end of the list and leaves from near its head; a request whose body
// took longer to arrive is inserted further forward (walking back from the end), so order always holds.
import { systemTimers, type Timers } from '../timers.js'
export { systemTimers, type Timers }

export interface DeadlineClock { now: () => number, timers: Timers }

/** What a decision sees of its guard: whether the deadline has answered, and what to undo if it does. */
export interface AbortHook {
  /** true once the deadline has answered: the work's result will be dropped */
  readonly aborted: boolean
  /** true once the guard has let go of the request: the deadline answered (aborted), or the work's answer is sent */
  readonly done: boolean
  /**
   * What to run, synchronously, when the deadline answers first. One slot: a later call replaces the
   * earlier one and null clears it, so nothing piles up whoever holds the hook.
   */
  onAbort: (fn: (() => void) | null) => void
  /** An AbortSignal for outbound calls (the risk service), made on first use. */
  readonly signal: AbortSignal
}

/** A request in flight under the guard. */
export class InFlight implements AbortHook {
  aborted = false
  /** the guard has let go of it: answered on the deadline, or finished by the work */
  done = false
  prev: InFlight | null = null
  next: InFlight | null = null
  private hook: (() => void) | null = null
  private controller: AbortController | null = null

  /** made by `DeadlineGuard.start`; made alone, it is a request that only its holder can `expire` */
  constructor (readonly deadlineAtMs: number, readonly onDeadline: (f: InFlight) => void = () => {}) {}

  onAbort (fn: (() => void) | null): void {
    this.hook = this.done ? null : fn
  }

  get signal (): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController()
      if (this.aborted) this.controller.abort()
    }
    return this.controller.signal
  }

  /** Abort first (the hook hands compensation to the store), then the deadline answer. */
  expire (): void {
    this.aborted = true
    this.done = true
    const hook = this.hook
    this.hook = null
    try {
      hook?.()
      this.controller?.abort()
    } finally {
      this.onDeadline(this)
    }
  }

  release (): void {
    this.done = true
    this.hook = null
  }
}

export class DeadlineGuard {
  private head: InFlight | null = null
  private tail: InFlight | null = null
  private count = 0
  private timer: unknown = null
  private armedAtMs = Number.POSITIVE_INFINITY

  constructor (private readonly clock: DeadlineClock = { now: Date.now, timers: systemTimers }) {}

  /** requests in flight */
  get size (): number {
    return this.count
  }

  /**
   * Registers a request whose answer is due at `deadlineAtMs` (on the clock). If the deadline passes before
   * `finish`, the request's abort hook runs, then `onDeadline`, once.
   */
  start (deadlineAtMs: number, onDeadline: (f: InFlight) => void): InFlight {
    const f = new InFlight(deadlineAtMs, onDeadline)
    let after = this.tail
    while (after !== null && after.deadlineAtMs > deadlineAtMs) after = after.prev
    if (after === null) {
      f.next = this.head
      if (this.head !== null) this.head.prev = f
      this.head = f
    } else {
      f.prev = after
      f.next = after.next
      if (after.next !== null) after.next.prev = f
      after.next = f
    }
    if (f.next === null) this.tail = f
    this.count++
    if (deadlineAtMs < this.armedAtMs) this.arm()
    return f
  }

  /**
   * The work is done: true when it is the one to answer, false when the deadline has answered already (its
   * result is then dropped). Clears the abort hook either way.
   */
  finish (f: InFlight): boolean {
    if (f.done) return false
    f.release()
    this.unlink(f)
    if (this.head === null && this.timer !== null) {
      // idle: no timer left behind to hold the process or fire for nothing
      this.clock.timers.clearTimeout(this.timer)
      this.timer = null
      this.armedAtMs = Number.POSITIVE_INFINITY
    }
    return true
  }

  private unlink (f: InFlight): void {
    if (f.prev !== null) f.prev.next = f.next
    else this.head = f.next
    if (f.next !== null) f.next.prev = f.prev
    else this.tail = f.prev
    f.prev = null
    f.next = null
    this.count--
  }

  /** Sets the one timer for the first deadline in the list. */
  private arm (): void {
    if (this.timer !== null) this.clock.timers.clearTimeout(this.timer)
    this.timer = null
    this.armedAtMs = Number.POSITIVE_INFINITY
    const first = this.head
    if (first === null) return
    this.armedAtMs = first.deadlineAtMs
    this.timer = this.clock.timers.setTimeout(this.sweep, Math.max(0, first.deadlineAtMs - this.clock.now()))
  }

  /** Answers every request whose deadline has passed, oldest first, then sets the timer for the next. */
  private readonly sweep = (): void => {
    this.timer = null
    this.armedAtMs = Number.POSITIVE_INFINITY
    const now = this.clock.now()
    try {
      for (let f = this.head; f !== null && f.deadlineAtMs <= now; f = this.head) {
        this.unlink(f)
        f.expire()
      }
    } finally {
      this.arm()
    }
  }
}
