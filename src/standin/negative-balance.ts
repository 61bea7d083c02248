// What happens when a stand-in replay leaves a balance below zero: the money was approved while the store
// could not be asked, and the books now owe it. A metric (counted by the caller), a log line naming the
// customer and reference, and a negative_balance exception in the settlement's queue (services.ts hands the
// queue's hook in beside the log line's).
import type { Logger } from 'pino'

export interface NegativeBalance {
  urn: string
  reference: string
  last4: string
  /** the debit replayed, minor units */
  debit: number
  /** the balance after it (below zero), minor units */
  available: number
}

export type NegativeBalanceHook = (nb: NegativeBalance) => void

/**
 * Hands it to the settlement's exception queue. A rejection (the queue could not be written) is handed over
 * again at the next replay pass, the entry not being done until it is taken: the queue opens one exception a
 * customer and reference however often it is handed one.
 */
export type NegativeBalanceQueue = (nb: NegativeBalance) => Promise<void>

/** The default: a warning line an operator can search for (the metric is counted by the caller). */
export function logNegativeBalance (log: Logger): NegativeBalanceHook {
  return (nb) => {
    log.warn({ urn: nb.urn, reference: nb.reference, debit: String(nb.debit), available: String(nb.available), exception: 'negative_balance' },
      'stand-in replay left the balance below zero: negative_balance exception')
  }
}

/**
 * A stand-in approval still owed when the store may have forgotten an earlier replay of it: older than the
 * store surely keeps a decision (DECISION_RETENTION_DAYS is never less than 7), so a replay sent before and
 * whose answer was lost (or an earlier process's) may have been debited, and the store no longer knows. It is
 * not replayed (that could debit it twice); an operator checks the customer's balance and settles it.
 */
export interface UnconfirmedReplay {
  urn: string
  reference: string
  last4: string
  /** the stand-in approval's debit, minor units */
  debit: number
  /** when the approval was made */
  atMs: number
}

/** Hands it to the exception queue; a rejection is handed over again at the next pass (one exception a reference). */
export type UnconfirmedQueue = (u: UnconfirmedReplay) => Promise<void>
