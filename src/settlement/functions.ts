// The posting step as a Redis function (Redis 7 and later), as the authorize step is (src/store/functions.ts):
// a script sent with EVALSHA defines every helper again on each call, which for a statement's million postings
// is most of the work; a function library defines them once. The names carry a digest of the code.
import { createHash } from 'node:crypto'
import { POSTING_BODY, POSTING_DEFINITIONS } from './lua.js'

const digest = createHash('sha1').update(POSTING_DEFINITIONS).update(POSTING_BODY).digest('hex').slice(0, 16)

export const POSTING_FUNCTION = `extauth_posting_${digest}`
export const POSTING_LIBRARY = `#!lua name=extauth_settlement_${digest}
${POSTING_DEFINITIONS}
redis.register_function('${POSTING_FUNCTION}', function (KEYS, ARGV)
${POSTING_BODY}
end)
`
