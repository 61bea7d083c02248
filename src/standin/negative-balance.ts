// What happens when a stand-in replay leaves a balance below zero: the money was approved while the store
// could not be asked, and the books now owe it. A metric and a log line naming the customer and reference;
// the one place to hand it to a settlement exception queue when there is one.
import type { Logger } from 'pino'

export interface NegativeBalance {
  urn: string
  reference: string
  /** the debit replayed, minor units */
  debit: number
  /** the balance after it (below zero), minor units */
  available: number
}

export type NegativeBalanceHook = (nb: NegativeBalance) => void

/** The default: a warning line an operator can search for (the metric is counted by the caller). */
export function logNegativeBalance (log: Logger): NegativeBalanceHook {
  return (nb) => {
    log.warn({ urn: nb.urn, reference: nb.reference, debit: String(nb.debit), available: String(nb.available), exception: 'negative_balance' },
      'stand-in replay left the balance below zero: negative_balance exception')
  }
}
