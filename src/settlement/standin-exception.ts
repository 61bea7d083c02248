// A stand-in approval replayed into the store that left the balance below zero: the money was approved while
// the store could not be asked, and the cardholder owes it. Queued as a negative_balance exception beside the
// statements' ones, once a customer and reference however often the replay hands it over.
import { part } from '../store/keys.js'
import type { SettlementStore } from './types.js'

/** what the stand-in replay knows of it (structurally src/standin/negative-balance.ts's NegativeBalance) */
export interface ReplayBelowZero {
  urn: string
  reference: string
  last4: string
  /** the debit replayed, minor units */
  debit: number
  /** the balance after it, below zero */
  available: number
}

export function standInExceptionKey (urn: string, reference: string): string {
  return `sn~${part(urn)}:${part(reference)}`
}

/** the queue's side of the stand-in's hook: rejects when the store did not take it (the replay hands it over again) */
export function queueStandInNegativeBalance (settlement: SettlementStore): (nb: ReplayBelowZero) => Promise<void> {
  return async (nb) => {
    await settlement.openException({
      kind: 'negative_balance',
      key: standInExceptionKey(nb.urn, nb.reference),
      urn: nb.urn,
      reference: nb.reference,
      last4: nb.last4,
      postingType: '',
      outcome: 'standin_replay',
      amount: -nb.available,
      accept: { action: 'none', amount: 0 },
      detail: `available below zero after a stand-in approval of ${nb.debit} was replayed`
    })
  }
}
