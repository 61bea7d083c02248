// The fair floor's one script (bench/fair-floor-server.ts), apart so that bench/script-cost.ts can send it
// beside extauth's authorize script; and what extauth may cost per decision against the fair floor.

/** extauth per decision at most: Node and Redis CPU as multiples of the fair floor's, and its allocation (KB) */
export const FAIR_FLOOR_TARGETS = { node: 1.4, redis: 1.6, allocKb: 28 }

/** Keys of one customer share a hash tag, as extauth's do; decision records are `<prefix>{urn}:d:<reference>`. */
export const floorKeysOf = (prefix: string) => (urn: string): { customer: string, cards: string, decision: (reference: string) => string } => ({
  customer: `${prefix}{${urn}}:c`,
  cards: `${prefix}{${urn}}:k`,
  decision: (reference) => `${prefix}{${urn}}:d:${reference}`
})

// KEYS[1] customer hash (status, available)  KEYS[2] cards hash (last4 -> status)  KEYS[3] decision record
// ARGV[1] last4  ARGV[2] debit (minor units)  ARGV[3] deadline epoch ms  ARGV[4] record TTL s
// Returns {code, replayed '0'|'1'}. The record is "code|debit|last4": a replay with the same amount and card
// gets the stored code, another amount or card a conflict (05).
export const DECIDE_LUA = `
local rec = redis.call('GET', KEYS[3])
local fp = ARGV[2] .. '|' .. ARGV[1]
if rec then
  if string.sub(rec, 4) ~= fp then return {'05', '0'} end
  return {string.sub(rec, 1, 2), '1'}
end
local code = '00'
local c = redis.call('HMGET', KEYS[1], 'status', 'available')
if not c[1] then code = '14'
elseif c[1] ~= 'ACTIVE' then code = '05'
else
  local card = redis.call('HGET', KEYS[2], ARGV[1])
  if card ~= 'ACTIVE' then code = '05'
  elseif tonumber(c[2]) < tonumber(ARGV[2]) then code = '51' end
end
local t = redis.call('TIME')
if tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > tonumber(ARGV[3]) then code = '05' end
if code == '00' and ARGV[2] ~= '0' then redis.call('HINCRBY', KEYS[1], 'available', '-' .. ARGV[2]) end
redis.call('SET', KEYS[3], code .. '|' .. fp, 'EX', ARGV[4])
return {code, '0'}
`

/**
 * The fair floor's script with the writes of extauth's present layout added to every decision, each in the
 * cheapest form Redis has and with extauth's own bytes, and nothing else (bench/script-cost.ts): the record with
 * the request's side (head and rest, as the journal reads it back), the decision.created event on the bucket's
 * stream in the same step (its data, and the rest again as its extra data, as extauth's entry has them; no
 * bound on the stream), and with ARGV[9] '1' the journal's two indexes (the time index, the reference index;
 * neither trimmed). No limits, card controls, hold check, record put together in Lua, or stream bound. The
 * least that layout costs Redis; another layout (the request's side stored once, the indexes built off the
 * decision's path) could cost less.
 *
 * KEYS[1..3] as DECIDE_LUA's   KEYS[4] the stream   KEYS[5] the time index   KEYS[6] the reference-index hash
 * ARGV[1..4] as DECIDE_LUA's   ARGV[5] the record's head   ARGV[6] the record's rest (the event's extra data)
 * ARGV[7] the event's data   ARGV[8] urn   ARGV[9] '1': the indexes   ARGV[10] arrival epoch ms
 * The reference is the record key's tail, the time-index member '<urn>:<reference>', as extauth's script has them.
 */
const WRITES: Array<[string, string]> = [
  // the stored value starts with the fair floor's own record, then a line break; the replacements are put in as they are (a function: no $ pattern of replace)
  ['if string.sub(rec, 4) ~= fp then', "if string.sub(rec, 4, 4 + #fp) ~= fp .. '\\n' then"],
  ["redis.call('SET', KEYS[3], code .. '|' .. fp, 'EX', ARGV[4])\n", `redis.call('SET', KEYS[3], code .. '|' .. fp .. '\\n' .. ARGV[5] .. '\\n' .. ARGV[6], 'EX', ARGV[4])
redis.call('XADD', KEYS[4], '*', 't', 'decision.created', 'u', ARGV[8], 'd', ARGV[7], 'x', ARGV[6])
if ARGV[9] == '1' then
  local ref = string.match(KEYS[3], '}:d:(.*)$')
  redis.call('ZADD', KEYS[5], ARGV[10], ARGV[8] .. ':' .. ref)
  redis.call('HSETNX', KEYS[6], ref, ARGV[8])
end
`]
]
export const DECIDE_WITH_WRITES_LUA = WRITES.reduce((lua, [from, to]) => {
  if (!lua.includes(from)) throw new Error(`DECIDE_WITH_WRITES_LUA: "${from.trim()}" is no longer in DECIDE_LUA`)
  return lua.replace(from, () => to)
}, DECIDE_LUA)
