// Refusals whose message says what stands in the way, the same from both stores: a caller reads what was
// reversed already or what is available, rather than the code again.
import { StoreRejection } from '../errors.js'

/** A second, different reversal of a decision: what the first one released, and when. */
export function alreadyReversed (reference: string, reversal: { amount: string, atMs: number } | null): never {
  const what = reversal === null
    ? `${reference} was reversed already`
    : `${reference} was reversed already: ${reversal.amount} released at ${new Date(reversal.atMs).toISOString()}`
  throw new StoreRejection('ALREADY_REVERSED', `${what}; a decision is reversed once (the same call again reads that reversal)`)
}

/** A debit or hold larger than the balance: what is available. */
export function insufficientFunds (available: number | string, asked: number): never {
  throw new StoreRejection('INSUFFICIENT_FUNDS', `available is ${String(available)}, less than the ${asked} asked (minor units)`)
}
