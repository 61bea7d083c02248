// Undoes, in the store, a decision that the deadline guard has already answered 05 (or whose store reply
// was lost). An abandon is idempotent and safe in either order with the authorize it undoes, so it is
// retried until the store takes it.
import type { Logger } from 'pino'
import type { AbandonInput, Store } from '../store/types.js'
import type { Metrics } from '../metrics.js'

export interface CompensatorOptions {
  retryDelayMsMin?: number
  retryDelayMsMax?: number
  /** past this many waiting, new ones are dropped with an error log (the memory is bounded) */
  pendingMax?: number
}

export class Compensator {
  private readonly pendingItems = new Map<string, AbandonInput>()
  private readonly timers = new Set<NodeJS.Timeout>()
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
  }

  get pending (): number {
    return this.pendingItems.size
  }

  abandon (input: AbandonInput): void {
    const id = `${input.urn}\u0000${input.reference}\u0000${input.attempt}`
    if (this.pendingItems.has(id)) return
    if (this.pendingItems.size >= this.pendingMax) {
      this.log.error({ urn: input.urn, reference: input.reference }, 'compensation dropped: too many waiting; reverse this decision by hand if it holds funds')
      this.metrics?.compensations.inc({ outcome: 'dropped' })
      return
    }
    this.pendingItems.set(id, input)
    this.metrics?.compensationsPending.set(this.pendingItems.size)
    this.attempt(id, input, 0)
  }

  private attempt (id: string, input: AbandonInput, tries: number): void {
    const p = this.store.abandon(input).then((outcome) => {
      this.pendingItems.delete(id)
      this.metrics?.compensationsPending.set(this.pendingItems.size)
      this.metrics?.compensations.inc({ outcome })
      this.log.warn({ urn: input.urn, reference: input.reference, outcome }, 'deadline compensation applied')
    }, (err: unknown) => {
      if (this.stopped) return
      const delay = Math.min(this.delayMax, this.delayMin * 2 ** Math.min(tries, 10))
      if (tries === 0) this.log.warn({ urn: input.urn, reference: input.reference, err: (err as Error).message }, 'deadline compensation waiting for the store')
      const t = setTimeout(() => {
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
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    for (const input of this.pendingItems.values()) {
      this.log.error({ urn: input.urn, reference: input.reference }, 'compensation not applied before exit; reverse this decision by hand if it holds funds')
    }
  }
}
