// How an action's failure is told to the person who asked for it: their input (a FormError), a refusal of
// the store or the API's checks (the admin API's error word and message), or a store that did not answer,
// where nothing is known of the outcome and the page says how to find out.
import type { FastifyRequest } from 'fastify'
import { apiAnswerOf, isStoreNotDone } from '../errors.js'
import { asApiError } from '../http/lifecycle-routes.js'
import { FormError } from './forms.js'
import type { Flash } from './html.js'

export function actionFailure (err: unknown, request: FastifyRequest): Flash {
  if (err instanceof FormError) return { kind: 'error', text: `Not done: ${err.message}` }
  const ours = apiAnswerOf(asApiError(err))
  if (ours !== null) return { kind: 'error', text: `Not done: ${ours.body.message} (${ours.body.error}).` }
  request.log.error({ err }, 'console action failed')
  if (isStoreNotDone(err)) return { kind: 'error', text: 'Not done: the store did not run it (it did not answer). Try again.' }
  return {
    kind: 'error',
    text: `The store did not answer, and whether it was done is not known (request id ${request.id}). Look at the balance and the audit trail before trying again; the same reference again is safe (a replay).`
  }
}
