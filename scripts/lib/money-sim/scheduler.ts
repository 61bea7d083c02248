// The one place where the simulated process meets the outside world (the store and the parties). Every such
// call waits in a queue, and the simulation runs one at a time, in an order drawn from the seed, after all
// continuations of the previous one have run. That makes a run with Redis as reproducible as one in memory,
// interleaves concurrent requests deterministically, and gives a point between any two calls for a kill.
import type { Random } from '../../../src/sim/prng.js'

export interface QueuedCall {
  /** the simulated process that made the call */
  owner: number
  label: string
  /** executes the call and answers the caller (faults included) */
  run: () => Promise<void>
  /** the caller died: the call may still have reached the other side, but nobody hears the answer */
  orphan: () => Promise<void>
}

const tick = async (): Promise<void> => { await new Promise<void>((resolve) => setImmediate(resolve)) }
const timerTick = async (): Promise<void> => { await new Promise<void>((resolve) => setTimeout(resolve, 0)) }

export class Scheduler {
  private readonly queue: QueuedCall[] = []

  constructor (private readonly rnd: Random) {}

  add (c: QueuedCall): void {
    this.queue.push(c)
  }

  count (pred: (c: QueuedCall) => boolean): number {
    return this.queue.filter(pred).length
  }

  take (pred: (c: QueuedCall) => boolean): QueuedCall[] {
    const out: QueuedCall[] = []
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const c = this.queue[i] as QueuedCall
      if (pred(c)) { out.unshift(c); this.queue.splice(i, 1) }
    }
    return out
  }

  /**
   * Lets every continuation run. `timersDue` says a retry timer (the compensator's, set to 0 ms) has yet
   * to put its call in the queue: then the timers phase runs too, until it has.
   */
  async quiesce (timersDue: () => boolean): Promise<void> {
    await tick()
    for (let spins = 0; timersDue(); spins++) {
      if (spins > 10_000) throw new Error('a retry timer never fired')
      await timerTick()
      await tick()
    }
  }

  /** Runs queued calls until none is left; `between` runs before each (a kill may happen there). */
  async drain (timersDue: () => boolean, between: () => Promise<void>): Promise<void> {
    for (;;) {
      await this.quiesce(timersDue)
      if (this.queue.length === 0) return
      await between()
      if (this.queue.length === 0) continue
      const i = Math.floor(this.rnd() * this.queue.length)
      const [c] = this.queue.splice(i, 1)
      await (c as QueuedCall).run()
    }
  }
}
