// The settlement's scripts (docs/operations/settlement.md), each a file of src/settlement/lua/: a posting of
// the platform's statement applied to one customer, an approval no statement posted, the expiry of a
// bucket's due holds, an exception opened outside a statement, and an exception's resolution. Each runs
// atomically on one bucket's slot, with the helpers of the store's scripts (src/store/lua/includes/) and its
// own (lua/includes/settlement.lua, which also lists the keys they use); the keys a script derives from the
// bucket's stream or the decision's key carry the same hash tag.
import assert from 'node:assert/strict'
import { luaScript } from '../store/lua-source.js'

const script = (name: string): string => luaScript(new URL(`lua/${name}.lua`, import.meta.url))

export const POSTING_LUA = script('posting')
/** The posting's body and the helpers before it, apart for the function library (functions.ts). */
export const POSTING_BODY = script('includes/posting-body')
assert(POSTING_LUA.endsWith(POSTING_BODY), 'lua/posting.lua ends with its body')
export const POSTING_DEFINITIONS = POSTING_LUA.slice(0, POSTING_LUA.length - POSTING_BODY.length)

export const NOT_POSTED_LUA = script('not-posted')
export const EXPIRE_LUA = script('expire')
export const RESOLVE_LUA = script('resolve')
export const OPEN_EXCEPTION_LUA = script('open-exception')
