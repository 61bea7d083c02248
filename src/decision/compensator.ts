// Undoes, in the store, a decision that the deadline guard has already answered 05 (or whose store reply
// was lost). An abandon is idempotent and safe in either order with the authorize it undoes, so it is
// retried until the store takes it. It is journaled before it is sent, so a process killed before the store
// took it leaves it to the next start (`recover`).
import type { Logger } from 'pino'
import type { AbandonInput, Store } from '../store/types.js'
import type { Metrics } from '../metrics.js'
import { isStoreNotDone, isStoreNotReplicated } from '../errors.js'
import { MemoryCompensationJournal, type CompensationJournal } from './compensation-journal.js'
import { systemTimers, type Timers } from './deadline.js'

export interface CompensatorOptions {
  retryDelayMsMin?: number
  retryDelayMsMax?: number
  /** past this many waiting, new ones are dropped with an error log (the memory is bounded) */
  pendingMax?: number
  journal?: CompensationJournal
  timers?: Timers
}

export class Compensator {
  private readonly pendingItems = new Map<string, AbandonInput>()
  private readonly timers = new Set<unknown>()
  private readonly clock: Timers
  private readonly journal: CompensationJournal
  private readonly inFlight = new Set<Promise<void>>()
  private readonly delayMin: number
  private readonly delayMax: number
  private readonly pendingMax: number
  private stopped = false

  constructor (
    private readonly store: Store,
    private readonly log: Logger,
    private readonly metrics?: Metrics,
    opts: CompensatorOptions = {}
  ) {
    this.delayMin = opts.retryDelayMsMin ?? 100
    this.delayMax = opts.retryDelayMsMax ?? 5000
    this.pendingMax = opts.pendingMax ?? 100_000
    this.journal = opts.journal ?? new MemoryCompensationJournal()
    this.clock = opts.timers ?? systemTimers
  }

  /** Sends again what an earlier process journaled and the store never took. */
  recover (): number {
    const left = this.journal.pending()
    for (const { id, input } of left) this.start(id, input, false)
    if (left.length > 0) this.log.warn({ pending: left.length }, 'compensations left by an earlier process: sending them again')
    return left.length
  }

  get pending (): number {
    return this.pendingItems.size
  }

  /** Journals the compensation, then sends it (in this tick: before the caller answers 05). */
  abandon (input: AbandonInput): void {
    this.start(`${input.urn}\u0000${input.reference}\u0000${input.attempt}`, input, true)
  }

  private start (id: string, input: AbandonInput, journal: boolean): void {
    if (this.pendingItems.has(id)) return
    if (this.pendingItems.size >= this.pendingMax) {
      this.log.error({ urn: input.urn, reference: input.reference }, 'compensation dropped: too many waiting; reverse this decision by hand if it holds funds')
      this.metrics?.compensations.inc({ outcome: 'dropped' })
      return
    }
    if (journal) {
      try {
        this.journal.add(id, input)
      } catch (err) {
        this.log.error({ urn: input.urn, reference: input.reference, err: (err as Error).message }, 'compensation journal not written; this compensation is lost if the process dies before the store takes it')
      }
    }
    this.pendingItems.set(id, input)
    this.metrics?.compensationsPending.set(this.pendingItems.size)
    this.attempt(id, input, 0)
  }

  private attempt (id: string, input: AbandonInput, tries: number): void {
    const p = this.store.abandon(input).then((outcome) => {
      this.pendingItems.delete(id)
      try {
        this.journal.done(id)
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'compensation journal not updated; the next start sends it again (harmless)')
      }
      this.metrics?.compensationsPending.set(this.pendingItems.size)
      this.metrics?.compensations.inc({ outcome })
      this.log.warn({ urn: input.urn, reference: input.reference, outcome }, 'deadline compensation applied')
    }, (err: unknown) => {
      if (this.stopped) return
      const delay = Math.min(this.delayMax, this.delayMin * 2 ** Math.min(tries, 10))
      if (tries === 0) {
        const fields = { urn: input.urn, reference: input.reference, err: (err as Error).message }
        // only the store out of reach is waited for in words; any other failure is named for what it is
        if (storeOutOfReach(err)) this.log.warn(fields, 'deadline compensation waiting for the store')
        else this.log.error({ ...fields, code: (err as { code?: unknown }).code }, 'deadline compensation failed in the store; tried again with backoff, reverse this decision by hand if it holds funds and the error stays')
      }
      const t = this.clock.setTimeout(() => {
        this.timers.delete(t)
        this.attempt(id, input, tries + 1)
      }, delay)
      this.timers.add(t)
    })
    const tracked = p.finally(() => this.inFlight.delete(tracked))
    this.inFlight.add(tracked)
  }

  /** Waits until nothing is pending or the time is up; what is left is logged. */
  async drain (timeoutMs: number): Promise<void> {
    if (this.stopped) return
    const until = Date.now() + timeoutMs
    while (this.pendingItems.size > 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    this.stopped = true
    for (const t of this.timers) this.clock.clearTimeout(t)
    this.timers.clear()
    for (const input of this.pendingItems.values()) {
      this.log.error({ urn: input.urn, reference: input.reference }, 'compensation not applied before exit; it stays in the journal for the next start')
    }
  }
}

/** The store could not be reached or did not say what it did: worth waiting for, not a fault of the undo. */
function storeOutOfReach (err: unknown): boolean {
  return isStoreNotDone(err) || isStoreNotReplicated(err) || (err as { code?: unknown } | null)?.code === 'EXTAUTH_ERR_STORE_OUTCOME_UNKNOWN'
}
