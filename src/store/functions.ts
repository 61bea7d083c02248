// The authorize script as a Redis function (Redis 7 and later). A script sent with EVALSHA runs its whole
// text on every call, so every helper it defines is defined again for each decision; a function library
// defines them once, when FUNCTION LOAD runs it, and FCALL runs only the body (docs/development/performance.md
// has what that saves). The same text either way: AUTHORIZE_LUA is the definitions followed by the body.
//
// The library's name and the function's carry a digest of the code: instances of two versions (a rolling
// upgrade) each load and call their own, and a library is never changed under an instance that uses it. A
// Redis without functions, or a user not allowed to load one, leaves the store on EVALSHA (RedisStore).
import { createHash } from 'node:crypto'
import { Cluster, ReplyError, type Redis } from 'ioredis'
import { AUTHORIZE_BODY, AUTHORIZE_DEFINITIONS } from './lua.js'

const digest = createHash('sha1').update(AUTHORIZE_DEFINITIONS).update(AUTHORIZE_BODY).digest('hex').slice(0, 16)

/** FUNCTION LIST shows it; an earlier version's can be removed with FUNCTION DELETE once none runs */
export const AUTHORIZE_LIBRARY_NAME = `extauth_${digest}`
export const AUTHORIZE_FUNCTION = `extauth_authorize_${digest}`
export const AUTHORIZE_LIBRARY = `#!lua name=${AUTHORIZE_LIBRARY_NAME}
${AUTHORIZE_DEFINITIONS}
redis.register_function('${AUTHORIZE_FUNCTION}', function (KEYS, ARGV)
${AUTHORIZE_BODY}
end)
`

/**
 * What an FCALL refused before running anything says: 'missing', the library is not loaded here (load it and
 * send again); 'refused', this Redis will not run it (a proxy or user without FCALL: send the script with
 * EVALSHA); null for anything else.
 */
export function fcallRefused (message: string): 'missing' | 'refused' | null {
  if (/^ERR Function not found/.test(message)) return 'missing'
  if (/^ERR unknown command/i.test(message) || /^NOPERM .*'fcall'/i.test(message)) return 'refused'
  return null
}

/**
 * Replies to FUNCTION LOAD that say this Redis will not run the library (before 7.0, a user without the
 * right, a proxy that does not pass the command), as against a state that passes (loading, a replica, a
 * failover under way): the former leave the store on EVALSHA.
 */
export function functionsUnavailable (message: string): boolean {
  return !/^(LOADING|READONLY|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|MOVED|ASK|OOM|NOREPLICAS|MISCONF)\b/.test(message)
}

/**
 * FUNCTION LOAD REPLACE of a library on every master: true once loaded, false where this Redis has no
 * functions or the user may not load one (the caller stays on EVALSHA); any other failure is thrown.
 */
export async function loadFunctionLibrary (client: Redis | Cluster, library: string): Promise<boolean> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client]
  try {
    await Promise.all(nodes.map(async (n) => await n.call('FUNCTION', 'LOAD', 'REPLACE', library)))
    return true
  } catch (err) {
    if (err instanceof ReplyError && functionsUnavailable((err as Error).message)) return false
    throw err
  }
}
