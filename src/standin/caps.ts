// The stand-in caps of one instance for one outage: per card (count and amount) and per instance (amount,
// and count when the policy sets one). A reservation is checked and counted in one synchronous step, so
// concurrent requests for one card can never pass a cap together; one whose journal write fails or whose
// deadline answered 05 is given back.
import type { StandInPolicy } from './policy.js'

export type CapRefusal = 'perCard.count' | 'perCard.amount' | 'perInstance.count' | 'perInstance.amount'

interface Use { count: number, amount: number }

export class StandInCaps {
  private readonly cards = new Map<string, Use>()
  private readonly instance: Use = { count: 0, amount: 0 }

  constructor (private readonly policy: StandInPolicy) {}

  /** the card's key: the customer and the last four digits (a card of the program) */
  static cardOf (urn: string, last4: string): string {
    return `${urn}\u0000${last4}`
  }

  /** Counts one approval of `amount` for the card, or says which cap it would pass (and counts nothing). */
  reserve (card: string, amount: number): CapRefusal | null {
    const c = this.cards.get(card) ?? { count: 0, amount: 0 }
    const p = this.policy
    if (c.count + 1 > p.perCard.count) return 'perCard.count'
    if (c.amount + amount > p.perCard.amount) return 'perCard.amount'
    if (p.perInstance.count !== null && this.instance.count + 1 > p.perInstance.count) return 'perInstance.count'
    if (this.instance.amount + amount > p.perInstance.amount) return 'perInstance.amount'
    this.add(card, c, 1, amount)
    return null
  }

  /** Counts an approval already made (one adopted from a journal), whatever the caps say. */
  count (card: string, amount: number): void {
    this.add(card, this.cards.get(card) ?? { count: 0, amount: 0 }, 1, amount)
  }

  /** Gives back a reservation that was never answered 00. */
  release (card: string, amount: number): void {
    const c = this.cards.get(card)
    if (c === undefined) return
    this.add(card, c, -1, -amount)
    if (c.count <= 0) this.cards.delete(card)
  }

  private add (card: string, c: Use, count: number, amount: number): void {
    c.count += count
    c.amount += amount
    this.cards.set(card, c)
    this.instance.count += count
    this.instance.amount += amount
  }

  /** this outage's approvals on this instance */
  get used (): Readonly<Use> {
    return this.instance
  }

  /** what one card has used */
  usedBy (card: string): Readonly<Use> {
    return this.cards.get(card) ?? { count: 0, amount: 0 }
  }

  /** a new outage: nothing used */
  reset (): void {
    this.cards.clear()
    this.instance.count = 0
    this.instance.amount = 0
  }
}
