// The card-lifecycle calls' own refusals; the admin listener answers each word with its status (src/errors.ts).
import { ExtauthError } from '../errors.js'

export class LifecycleConflict extends ExtauthError<'REFERENCE_CONFLICT' | 'IN_PROGRESS' | 'WRONG_STATE'> {
  override readonly name = 'LifecycleConflict'
}

/** Not found, or (NOT_CONFIGURED) the party behind the call is not configured. */
export class LifecycleNotFound extends ExtauthError<'LOAD_NOT_FOUND' | 'TRANSFER_NOT_FOUND' | 'UNLOAD_NOT_FOUND' | 'CUSTOMER_NOT_FOUND' | 'NOT_CONFIGURED'> {
  override readonly name = 'LifecycleNotFound'
}
