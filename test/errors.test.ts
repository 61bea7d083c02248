// The error catalogue is user-facing: clients branch on the `error` word and its HTTP status. This table is
// written out by hand so that a change to src/errors.ts has to be made here too, on purpose.
import t from 'tap'
import { API_ERRORS, ExtauthError, StoreRejection, apiAnswerOf, apiError } from '../src/errors.js'
import { LifecycleConflict, LifecycleNotFound } from '../src/moves/errors.js'

const PINNED: Record<string, number> = {
  VALIDATION: 400,
  BAD_REQUEST: 400,
  SAME_CUSTOMER: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CUSTOMER_NOT_FOUND: 404,
  CARD_NOT_FOUND: 404,
  DECISION_NOT_FOUND: 404,
  LOAD_NOT_FOUND: 404,
  TRANSFER_NOT_FOUND: 404,
  UNLOAD_NOT_FOUND: 404,
  REFERENCE_CONFLICT: 409,
  INSUFFICIENT_FUNDS: 409,
  NOT_APPROVED: 409,
  EXCEEDS_HOLD: 409,
  ALREADY_REVERSED: 409,
  BALANCE_LIMIT: 409,
  IN_PROGRESS: 409,
  WRONG_STATE: 409,
  EXCEPTION_NOT_FOUND: 404,
  STATEMENT_NOT_FOUND: 404,
  ALREADY_RESOLVED: 409,
  RULES_INVALID: 422,
  STATEMENT_INVALID: 422,
  NOT_CONFIGURED: 503,
  UNAVAILABLE: 503
}

t.same({ ...API_ERRORS }, PINNED, 'every error word and its status, pinned')

t.test('each kind of error maps through the one catalogue', async (t) => {
  const cases: Array<[ExtauthError, string, number]> = [
    [new StoreRejection('EXCEEDS_HOLD', 'x'), 'EXCEEDS_HOLD', 409],
    [new LifecycleConflict('IN_PROGRESS', 'x'), 'IN_PROGRESS', 409],
    [new LifecycleNotFound('NOT_CONFIGURED', 'x'), 'NOT_CONFIGURED', 503],
    [new LifecycleNotFound('UNLOAD_NOT_FOUND', 'x'), 'UNLOAD_NOT_FOUND', 404],
    [apiError('SAME_CUSTOMER', 'x'), 'SAME_CUSTOMER', 400]
  ]
  for (const [err, word, status] of cases) {
    t.equal(err.code, `EXTAUTH_ERR_${word}`, `${word}: a stable code`)
    t.same(apiAnswerOf(err), { status, body: { error: word, message: 'x' } }, `${word}: answered ${status}`)
  }
  t.equal(apiAnswerOf(new Error('not ours')), null, 'an error outside the catalogue is not mapped')
})
