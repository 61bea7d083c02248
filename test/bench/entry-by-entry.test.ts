// bench/limits.ts compares the authorize script with the entry-by-entry sum it replaced, rebuilt from the
// script's current text: a change to the script's text that the rebuild no longer finds must fail here, not
// only when someone runs the bench.
import t from 'tap'
import { Redis } from 'ioredis'
import { entryByEntryScript } from '../../bench/lib/entry-by-entry.js'
import { AUTHORIZE_LUA } from '../../src/store/lua.js'
import { SHARED_REDIS_URL } from '../helpers/redis.js'

t.test('the entry-by-entry variant is rebuilt from the authorize script and loads', async (t) => {
  const lua = entryByEntryScript()
  t.not(lua, AUTHORIZE_LUA, 'both swaps changed the text')
  t.notMatch(lua, /totalsReady\(key/, 'the check never reads the totals')
  t.notMatch(lua, /windowAdd(Count)?\(key, nowMs, member\)/, 'the commit adds no totals')
  const redis = new Redis(SHARED_REDIS_URL)
  t.teardown(() => { redis.disconnect() })
  t.match(await redis.script('LOAD', lua), /^[0-9a-f]{40}$/, 'Redis compiles it')
})
