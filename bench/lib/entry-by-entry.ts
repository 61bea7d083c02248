// The authorize script as it was before the running totals of limit windows: every entry of the window summed
// in Lua. Rebuilt from the current script's text for bench/limits.ts's same-run comparison; a test
// (test/bench/entry-by-entry.test.ts) fails when the script's text moves away from what the swaps expect.
import { AUTHORIZE_LUA } from '../../src/store/lua.js'

/** The check and commit as they were before the totals: every entry of the window summed in Lua. */
export function entryByEntryScript (): string {
  const swaps: Array<[string, string]> = [
    // the check: never the totals, so always the entry-by-entry sum the script keeps for windows without them
    ['    elseif totalsReady(key, tonumber(retainMs)) then\n', '    elseif false then\n'],
    ['    if l[2] == \'count\' then windowAddCount(key, nowMs, member) else windowAdd(key, nowMs, member) end\n    windowTrim(key, nowMs - retain)\n    windowExpire(key, retain)', `    redis.call('ZADD', key, nowMs, member)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. fmt(nowMs - retain))
    if redis.call('PTTL', key) < retain then redis.call('PEXPIRE', key, retain) end`]
  ]
  let lua = AUTHORIZE_LUA
  for (const [now, before] of swaps) {
    if (!lua.includes(now)) throw new Error(`the authorize script changed: cannot rebuild the entry-by-entry sum (${now.trim()})`)
    lua = lua.replace(now, before)
  }
  return lua
}
