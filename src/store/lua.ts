// The Redis store's scripts, each a file of src/store/lua/ (its KEYS, ARGV and reply described at its top)
// with the helpers of src/store/lua/includes/ it needs; registered once with defineCommand. Each runs
// atomically on the one slot of a customer's bucket (every KEYS[i] carries the same hash tag).
import assert from 'node:assert/strict'
import { luaScript } from './lua-source.js'

const script = (name: string): string => luaScript(new URL(`lua/${name}.lua`, import.meta.url))

export const AUTHORIZE_LUA = script('authorize')
/**
 * The authorize script's body (lua/includes/authorize-body.lua) and the helpers before it, apart so that the
 * same code also runs as a Redis function (AUTHORIZE_LIBRARY in functions.ts): a function library defines
 * them once when it is loaded, a script on every call.
 */
export const AUTHORIZE_BODY = script('includes/authorize-body')
assert(AUTHORIZE_LUA.endsWith(AUTHORIZE_BODY), 'lua/authorize.lua ends with its body')
export const AUTHORIZE_DEFINITIONS = AUTHORIZE_LUA.slice(0, AUTHORIZE_LUA.length - AUTHORIZE_BODY.length)

export const ABANDON_LUA = script('abandon')
export const REVERSE_LUA = script('reverse')
export const MONEY_OP_LUA = script('money-op')
export const PUT_CUSTOMER_LUA = script('put-customer')
export const PUT_CARD_LUA = script('put-card')
export const CARD_CONTROLS_LUA = script('card-controls')
export const AUDIT_LUA = script('write-audit')
export const UNLOCK_LIFECYCLE_LUA = script('unlock-lifecycle')
export const RENEW_LIFECYCLE_LUA = script('renew-lifecycle')
export const PUT_LIFECYCLE_LUA = script('put-lifecycle')
export const REF_LOOKUP_LUA = script('ref-lookup')
export const REINDEX_LUA = script('reindex')
