// What the stand-in replay hands to the exception queue, beside the statements' exceptions, once a customer and
// reference however often it is handed over:
// - negative_balance: an approval replayed into the store left the balance below zero: the money was approved
//   while the store could not be asked, and the cardholder owes it;
// - standin_unconfirmed: an approval still owed when the store may have forgotten an earlier replay of it (older
//   than the decisions' retention): not replayed, as it may have been debited already; `accept` debits it.
import { part } from '../store/keys.js'
import type { NewException, SettlementStore } from './types.js'

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

export function unconfirmedExceptionKey (urn: string, reference: string): string {
  return `su~${part(urn)}:${part(reference)}`
}

/** what the replay knows of it (structurally src/standin/negative-balance.ts's UnconfirmedReplay) */
export interface ReplayUnconfirmed {
  urn: string
  reference: string
  last4: string
  debit: number
  atMs: number
}

/** what both exceptions carry of the approval, beside their own kind, key, amount, accept and detail */
async function openStandInException (settlement: SettlementStore, r: { urn: string, reference: string, last4: string },
  x: Pick<NewException, 'kind' | 'key' | 'amount' | 'accept' | 'detail'>): Promise<void> {
  await settlement.openException({ ...x, urn: r.urn, reference: r.reference, last4: r.last4, postingType: '', outcome: 'standin_replay' })
}

/** the queue's side of the stand-in's hook: rejects when the store did not take it (the replay hands it over again) */
export function queueStandInNegativeBalance (settlement: SettlementStore): (nb: ReplayBelowZero) => Promise<void> {
  return async (nb) => {
    await openStandInException(settlement, nb, {
      kind: 'negative_balance',
      key: standInExceptionKey(nb.urn, nb.reference),
      amount: -nb.available,
      accept: { action: 'none', amount: 0 },
      detail: `available below zero after a stand-in approval of ${nb.debit} was replayed`
    })
  }
}

/** the queue's side of the stand-in's unconfirmed hook: rejects when the store did not take it */
export function queueStandInUnconfirmed (settlement: SettlementStore): (u: ReplayUnconfirmed) => Promise<void> {
  return async (u) => {
    await openStandInException(settlement, u, {
      kind: 'standin_unconfirmed',
      key: unconfirmedExceptionKey(u.urn, u.reference),
      amount: u.debit,
      accept: { action: 'debit', amount: u.debit },
      detail: `a stand-in approval of ${u.debit} made at ${new Date(u.atMs).toISOString()} was still owed to the store when the store may have ` +
        'forgotten an earlier replay of it (DECISION_RETENTION_DAYS): not replayed. Look for its debit: a decision.created event with standIn true, ' +
        'or a statement line of the reference (a force_post debited it); found, write it off; not found, accept debits it'
    })
  }
}
