// How an action's failure is told to the person who asked for it: their input (a FormError), a refusal of
// the store or the API's checks (the admin API's error word and message), or a store that did not answer,
// where nothing is known of the outcome and the page says how to find out.
import type { FastifyRequest } from 'fastify'
import { apiAnswerOf, isStoreNotDone } from '../errors.js'
import { asApiError } from '../http/lifecycle-routes.js'
import { FormError } from './forms.js'
import type { Flash } from './html.js'

/** The store's refusals in words; the error word follows in brackets. */
const WORDS: Record<string, string> = {
  CUSTOMER_NOT_FOUND: 'there is no such customer',
  CARD_NOT_FOUND: 'the customer has no such card',
  DECISION_NOT_FOUND: 'there is no such decision',
  REFERENCE_CONFLICT: 'this reference was used before with another amount: choose a new reference',
  INSUFFICIENT_FUNDS: 'the available balance is less than the amount',
  NOT_APPROVED: 'only an approved decision holds money to release',
  EXCEEDS_HOLD: 'the amount is more than the decision still holds',
  ALREADY_REVERSED: 'this decision was already reversed (a decision is reversed once)',
  BALANCE_LIMIT: 'the balance would pass the largest amount kept',
  EXCEPTION_NOT_FOUND: 'there is no such exception',
  ALREADY_RESOLVED: 'this exception was already resolved with another action (an exception is resolved once)'
}

export function actionFailure (err: unknown, request: FastifyRequest): Flash {
  if (err instanceof FormError) return { kind: 'error', text: `Not done: ${err.message}` }
  const ours = apiAnswerOf(asApiError(err))
  if (ours !== null) return { kind: 'error', text: `Not done: ${WORDS[ours.body.error] ?? ours.body.message} (${ours.body.error}).` }
  request.log.error({ err }, 'console action failed')
  if (isStoreNotDone(err)) return { kind: 'error', text: 'Not done: the store did not run it (it did not answer). Try again.' }
  return {
    kind: 'error',
    text: `The store did not answer, and whether it was done is not known (request id ${request.id}). Look at the balance and the audit trail before trying again; the same reference again is safe (a replay).`
  }
}
