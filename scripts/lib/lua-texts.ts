// Every Lua text the service sends to Redis, by the name its module exports it under: the scripts that go with
// EVALSHA (ioredis' defineCommand, or EVAL) and the function libraries that go with FUNCTION LOAD. A text's
// SHA-1 is what EVALSHA names it by; test/store/lua-digests.test.ts holds them to a fixture.
import { createHash } from 'node:crypto'
import { LEASE_LUA, SETTLE_LUA, UNLEASE_LUA } from '../../src/events/outbox.js'
import { POSTING_LIBRARY } from '../../src/settlement/functions.js'
import { EXPIRE_LUA, NOT_POSTED_LUA, OPEN_EXCEPTION_LUA, POSTING_LUA, RESOLVE_LUA } from '../../src/settlement/lua.js'
import { AUTHORIZE_LIBRARY } from '../../src/store/functions.js'
import {
  ABANDON_LUA, AUDIT_LUA, AUTHORIZE_LUA, CARD_CONTROLS_LUA, MONEY_OP_LUA, PUT_CARD_LUA, PUT_CUSTOMER_LUA, PUT_LIFECYCLE_LUA,
  REF_LOOKUP_LUA, REINDEX_LUA, RENEW_LIFECYCLE_LUA, REVERSE_LUA, UNLOCK_LIFECYCLE_LUA
} from '../../src/store/lua.js'

export const LUA_TEXTS: Readonly<Record<string, string>> = {
  'store/ABANDON_LUA': ABANDON_LUA,
  'store/AUDIT_LUA': AUDIT_LUA,
  'store/AUTHORIZE_LIBRARY': AUTHORIZE_LIBRARY,
  'store/AUTHORIZE_LUA': AUTHORIZE_LUA,
  'store/CARD_CONTROLS_LUA': CARD_CONTROLS_LUA,
  'store/MONEY_OP_LUA': MONEY_OP_LUA,
  'store/PUT_CARD_LUA': PUT_CARD_LUA,
  'store/PUT_CUSTOMER_LUA': PUT_CUSTOMER_LUA,
  'store/PUT_LIFECYCLE_LUA': PUT_LIFECYCLE_LUA,
  'store/REF_LOOKUP_LUA': REF_LOOKUP_LUA,
  'store/REINDEX_LUA': REINDEX_LUA,
  'store/RENEW_LIFECYCLE_LUA': RENEW_LIFECYCLE_LUA,
  'store/REVERSE_LUA': REVERSE_LUA,
  'store/UNLOCK_LIFECYCLE_LUA': UNLOCK_LIFECYCLE_LUA,
  'settlement/EXPIRE_LUA': EXPIRE_LUA,
  'settlement/NOT_POSTED_LUA': NOT_POSTED_LUA,
  'settlement/OPEN_EXCEPTION_LUA': OPEN_EXCEPTION_LUA,
  'settlement/POSTING_LIBRARY': POSTING_LIBRARY,
  'settlement/POSTING_LUA': POSTING_LUA,
  'settlement/RESOLVE_LUA': RESOLVE_LUA,
  'events/LEASE_LUA': LEASE_LUA,
  'events/SETTLE_LUA': SETTLE_LUA,
  'events/UNLEASE_LUA': UNLEASE_LUA
}

/** name -> SHA-1 (hex) of the text, names sorted */
export function luaDigests (): Record<string, string> {
  return Object.fromEntries(Object.keys(LUA_TEXTS).sort().map((name) => [name, createHash('sha1').update(LUA_TEXTS[name] as string).digest('hex')]))
}
