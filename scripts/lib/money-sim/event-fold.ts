// The outbox replayed: every customer's balance folded from the events alone, as a receiver keeping its own
// books would (docs/api/events.md), never from the store's balance fields. After every step the events the
// step wrote in the touched customers' buckets are folded, in stream order, and then trimmed as the relay trims
// what it delivered; each touched customer's folded balance must be the store's and the model's. Every
// step, because an event missing or wrong is then caught at the step that wrote it, and the read is small.
import { eventBody } from '../../../src/store/outbox-entry.js'
import { bucketOf } from '../../../src/store/keys.js'
import type { CheckEnv } from './invariants.js'

type Move = (data: Record<string, unknown>) => number

const num = (v: unknown): number => (typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN)
/** a balance: below zero after a clearing over its hold or a stand-in replay */
const signed = (v: unknown): number => (typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : NaN)

/** What each event type does to the customer's available balance. */
const MOVES: Record<string, Move> = {
  // an approval holds its debit (held is 0 for a decline, a deadline 05 or a zero-amount check)
  'decision.created': (d) => -num(d.held),
  'decision.released': (d) => num(d.released),
  'decision.reversed': (d) => num(d.released),
  // holds mode: a hold released by expiry
  'authorization.expired': (d) => num(d.released),
  'funds.credited': (d) => num(d.amount),
  'load.completed': (d) => num(d.amount),
  'transfer.completed': (d) => num(d.amount),
  'funds.debited': (d) => -num(d.amount),
  // the unload's money left with its hold (funds.debited): its completion moves nothing
  'unload.completed': () => 0,
  'customer.updated': () => 0,
  // holds mode: a statement's line that needs an operator (the money moved with its settlement.posted)
  'reconciliation.exception': () => 0,
  'card.updated': () => 0,
  'card.controls.updated': () => 0
}

export class EventFold {
  private readonly balances = new Map<string, number>()
  private folded = 0

  get events (): number {
    return this.folded
  }

  balance (urn: string): number {
    return this.balances.get(urn) ?? 0
  }

  /** Folds the new events of these customers' buckets, checking each against the balance it reports. */
  async catchUp (env: CheckEnv, urns: Iterable<string>): Promise<void> {
    const { sim, raw } = env
    const buckets = new Set([...urns].map(bucketOf))
    for (const bucket of buckets) {
      const entries = await raw.events(bucket)
      for (const e of entries) {
        const { type, data } = eventBody(bucket, e.id, e.fields)
        const urn = String(data.urn)
        // a statement's posting: its event carries the balance after it, not the change (the outcomes table
        // decides the change from the hold); the fold takes that balance, and books-agree checks it against the model
        const move = type === 'settlement.posted' ? (x: Record<string, unknown>) => signed(x.available) - this.balance(urn) : MOVES[type]
        if (move === undefined) { sim.violation('events-replay', `event ${e.id} of ${urn}: type ${type} has no known effect on money`); continue }
        const delta = move(data)
        if (!Number.isSafeInteger(delta)) { sim.violation('events-replay', `event ${e.id} ${type} of ${urn}: no amount in ${JSON.stringify(data)}`); continue }
        const after = this.balance(urn) + delta
        this.balances.set(urn, after)
        this.folded++
        // the balance the event reports after its change (null when the store did not know it)
        const reported = num(data.available)
        if (!Number.isNaN(reported) && reported !== after) {
          sim.violation('events-replay', `event ${e.id} ${type} of ${urn} reports available ${reported}, the events before it and its own change make ${after}`)
        }
      }
      const last = entries[entries.length - 1]
      if (last !== undefined) await raw.trimEvents(bucket, last.id, entries.length)
    }
    const dropped = await raw.droppedEvents(buckets)
    if (dropped > 0) sim.violation('events-replay', `${dropped} events dropped from the outbox: the fold cannot hold`)
  }

  /** The folded balance of each customer is the store's and the model's. */
  async check (env: CheckEnv, urns: Iterable<string>): Promise<void> {
    const list = [...urns]
    await this.catchUp(env, list)
    const { sim } = env
    for (const urn of list) {
      const m = sim.model.customers.get(urn)
      if (m === undefined) continue
      const c = await sim.store.getCustomer(urn)
      const folded = this.balance(urn)
      if (c !== null && c.available !== folded) sim.violation('events-replay', `customer ${JSON.stringify(urn)}: the events make ${folded}, the store has ${c.available}`)
      if (m.available !== folded) sim.violation('events-replay', `customer ${JSON.stringify(urn)}: the events make ${folded}, the model has ${m.available}`)
    }
  }
}
