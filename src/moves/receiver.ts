// Who may receive money through a card-lifecycle call.
import type { Customer } from '../store/types.js'
import { LifecycleConflict } from './errors.js'

/**
 * Money is never sent into a wallet that can use none of it: a CLOSED customer can neither spend, send nor
 * unload, so a load or a transfer to one is refused before any party is asked (the card is not charged,
 * the platform moves nothing). A BLOCKED customer still receives: a block is temporary and stops what
 * leaves the wallet, and what arrives meanwhile (a refund, a load, a transfer) is there when it is lifted.
 * A call already under way settles whatever the status since: the card may be charged, the money moved.
 */
export function refuseClosedReceiver (customer: Pick<Customer, 'urn' | 'status'>): void {
  if (customer.status === 'CLOSED') {
    throw new LifecycleConflict('WRONG_STATE', `customer ${customer.urn} is CLOSED: it receives no loads or transfers`)
  }
}
