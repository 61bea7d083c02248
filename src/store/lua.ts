// Lua scripts of the Redis store, registered once with defineCommand. Each runs atomically on the one slot
// of a customer's bucket (every KEYS[i] carries the same hash tag). Amounts are integer strings; Lua numbers
// are doubles, exact to 2^53, which the callers never exceed (see MAX_BALANCE).
//
// Numbers go back to strings with string.format('%d'): tostring() would give "1e+15".

const COMMON = `
local function fmt (n) return string.format('%d', n) end
-- Gives an amount back to a card control's daily total; a total back at zero is removed, so a released
-- approval leaves no trace. A total already expired (the day is over) stays gone.
local function giveBackDaily (key, released)
  local cur = tonumber(redis.call('GET', key) or '0')
  if cur <= 0 then return end
  local left = cur - released
  if left <= 0 then redis.call('DEL', key) else redis.call('SET', key, fmt(left), 'KEEPTTL') end
end
-- A programmer error, never an operating one: the caller asserted the same before sending.
local function amount (s, zeroOk)
  local n = tonumber(s)
  if type(s) ~= 'string' or not string.match(s, '^%d+$') or not n or n > 9007199254740991 or (n == 0 and not zeroOk) then
    error('EXTAUTH_ASSERT amount must be a safe positive integer, got ' .. tostring(s))
  end
  return n
end
local function storeNowMs ()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

/**
 * The one atomic step of a transaction: idempotency, customer and card state, the stateless rules' decline,
 * limits, funds, and the commit (debit, limit entries, decision record, stream entry). All or nothing.
 * A replay hands the decision to the replaying attempt (see abandon).
 *
 * KEYS[1] customer hash (status, customerId, available)
 * KEYS[2] cards hash (last4 -> status)
 * KEYS[3] decision record of (urn, reference), a JSON string
 * KEYS[4] the bucket's decision stream
 * KEYS[5..4+n] one limit window (sorted set) per limit in ARGV, same order
 * ARGV[1] reference            ARGV[2] urn                 ARGV[3] last4
 * ARGV[4] debit amount         ARGV[5] fingerprint         ARGV[6] attempt id
 * ARGV[7] now ms (app clock; the score of window entries)
 * ARGV[8] deadline epoch ms: past it on the store's clock nothing is committed
 * ARGV[9] arrival epoch ms     ARGV[10] decision TTL s (covers the limits' windows)     ARGV[11] stream max length
 * ARGV[12] stateless decline code or ''                    ARGV[13] its rule id or ''
 * ARGV[14] meta JSON, stored as is                         ARGV[15] n, the number of limits
 * ARGV[16+7(i-1) ..] per limit i: mode, measure, windowStartMs, retainMs, max, code, ruleId
 * Card controls (docs/api/card-controls.md), after the limits; with m = 0 nothing is checked or counted:
 * KEYS[5+n] the card's own controls (hash `kind|field`)   KEYS[5+n+j] control j's daily total of the local day
 * ARGV[cb] m, the number of controls that apply (cb = 16 + 7n)   ARGV[cb+1] ms a daily total is kept
 * ARGV[cb+2+4(j-1) ..] per control j: kind, default enabled '1'|'0', default perTransactionMax or '', default dailyMax or ''
 * Returns {code, reason, ruleId, replayed '0'|'1', available or '', {shadow limit rule ids}, control hit JSON or ''}
 */
export const AUTHORIZE_LUA = COMMON + `
local existing = redis.call('GET', KEYS[3])
if existing then
  local rec = cjson.decode(existing)
  if rec.fingerprint ~= ARGV[5] then
    redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[11], '*', 'type', 'conflict', 'urn', ARGV[2], 'ref', ARGV[1], 'code', '05')
    return {'05', 'conflict', '', '0', '', {}}
  end
  -- This attempt now answers with the stored decision, so it owns it: a deadline compensation of the
  -- earlier attempt must not undo what this one answers, and this one's compensation must.
  if rec.attempt ~= ARGV[6] and rec.answeredOnDeadline ~= true then
    rec.attempt = ARGV[6]
    redis.call('SET', KEYS[3], cjson.encode(rec), 'KEEPTTL')
  end
  local rid = rec.ruleId
  if type(rid) ~= 'string' then rid = '' end
  return {rec.code, rec.reason, rid, '1', '', {}}
end

local debit = amount(ARGV[4], true)
local nowMs = tonumber(ARGV[7])
local n = tonumber(ARGV[15])
local code, reason, ruleId = '00', 'approved', ''
local available = nil

-- Card controls. The card's own settings are read here, in the atomic step: a change made between the
-- request's arrival and this commit is the one applied. Every off control first, then the limits.
local cb = 16 + n * 7
local ck = 5 + n
local m = tonumber(ARGV[cb] or '0') or 0
local controlHit = nil
local function checkControls ()
  local fields = {}
  for j = 1, m do
    local kind = ARGV[cb + 2 + (j - 1) * 4]
    table.insert(fields, kind .. '|enabled')
    table.insert(fields, kind .. '|perTransactionMax')
    table.insert(fields, kind .. '|dailyMax')
  end
  local own = redis.call('HMGET', KEYS[ck], unpack(fields))
  local ctl = {}
  for j = 1, m do
    local b = cb + 2 + (j - 1) * 4
    local function pick (i, default)
      local v = own[(j - 1) * 3 + i]
      if v then return v end
      return default
    end
    ctl[j] = { kind = ARGV[b], enabled = pick(1, ARGV[b + 1]), per = pick(2, ARGV[b + 2]), daily = pick(3, ARGV[b + 3]) }
  end
  for j = 1, m do
    if ctl[j].enabled ~= '1' then
      controlHit = { control = ctl[j].kind, check = 'enabled', debit = ARGV[4] }
      return '05', 'control_off'
    end
  end
  for j = 1, m do
    local c = ctl[j]
    if c.per ~= '' and debit > tonumber(c.per) then
      controlHit = { control = c.kind, check = 'perTransactionMax', limit = c.per, debit = ARGV[4] }
      return '61', 'control_limit'
    end
    if c.daily ~= '' then
      local before = tonumber(redis.call('GET', KEYS[ck + j]) or '0')
      if before + debit > tonumber(c.daily) then
        controlHit = { control = c.kind, check = 'dailyMax', limit = c.daily, totalBefore = fmt(before), debit = ARGV[4] }
        return '61', 'control_limit'
      end
    end
  end
  return '00', 'approved'
end

local cust = redis.call('HMGET', KEYS[1], 'status', 'available')
if not cust[1] then
  code, reason = '14', 'unknown_urn'
else
  available = tonumber(cust[2]) or 0
  if cust[1] == 'BLOCKED' then code, reason = '05', 'customer_blocked'
  elseif cust[1] == 'CLOSED' then code, reason = '05', 'customer_closed'
  else
    local card = redis.call('HGET', KEYS[2], ARGV[3])
    if card == 'LOST' then code, reason = '41', 'card_lost'
    elseif card == 'STOLEN' then code, reason = '43', 'card_stolen'
    elseif card == 'BLOCKED' then code, reason = '05', 'card_blocked'
    elseif (not card) and redis.call('HLEN', KEYS[2]) > 0 then code, reason = '14', 'card_unknown'
    else
      if m > 0 then code, reason = checkControls() end
      if code == '00' and ARGV[12] ~= '' then code, reason, ruleId = ARGV[12], 'rule', ARGV[13] end
    end
  end
end

local shadowHits = {}
if code == '00' then
  for i = 1, n do
    local b = 15 + (i - 1) * 7
    local key = KEYS[4 + i]
    local used
    if ARGV[b + 2] == 'count' then
      used = redis.call('ZCOUNT', key, ARGV[b + 3], '+inf') + 1
    else
      used = debit
      for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, ARGV[b + 3], '+inf')) do
        used = used + tonumber(string.match(m, '^(%d+)|'))
      end
    end
    if used > tonumber(ARGV[b + 5]) then
      if ARGV[b + 1] == 'shadow' then
        table.insert(shadowHits, ARGV[b + 7])
      elseif code == '00' then
        code, reason, ruleId = ARGV[b + 6], 'limit', ARGV[b + 7]
      end
    end
  end
  if code == '00' and debit > available then code, reason = '51', 'insufficient_funds' end
end

local storeNow = storeNowMs()
local deadline = tonumber(ARGV[8])
local onDeadline = storeNow > deadline
local decidedCode = cjson.null
if onDeadline then
  decidedCode = code
  code, reason, ruleId = '05', 'deadline', ''
  controlHit = nil
end

local held = 0
local entries = {}
if code == '00' then
  -- HINCRBY refuses the -0 of a zero-amount account check
  if debit > 0 then available = redis.call('HINCRBY', KEYS[1], 'available', -debit) end
  held = debit
  local member = ARGV[4] .. '|' .. ARGV[1]
  for i = 1, n do
    local b = 15 + (i - 1) * 7
    local key = KEYS[4 + i]
    local retain = tonumber(ARGV[b + 4])
    redis.call('ZADD', key, nowMs, member)
    redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. fmt(nowMs - retain))
    if redis.call('PTTL', key) < retain then redis.call('PEXPIRE', key, retain) end
    table.insert(entries, {key, member})
  end
end
local controlEntries = {}
-- a zero-amount account check adds nothing to a daily total
if code == '00' and debit > 0 then
  for j = 1, m do
    local key = KEYS[ck + j]
    -- the amount as sent, digits: how a Lua number is turned into an argument differs between Redis versions
    if redis.call('INCRBY', key, ARGV[4]) == debit then redis.call('PEXPIRE', key, ARGV[cb + 1]) end
    table.insert(controlEntries, {key, ARGV[4]})
  end
end

local rid = cjson.null
if ruleId ~= '' then rid = ruleId end
local rec = {
  urn = ARGV[2], reference = ARGV[1], last4 = ARGV[3], attempt = ARGV[6],
  code = code, reason = reason, ruleId = rid,
  debit = ARGV[4], held = fmt(held), released = '0', fingerprint = ARGV[5],
  shadowLimitHits = shadowHits, limitEntries = entries,
  arrivedAtMs = tonumber(ARGV[9]), deadlineAtMs = deadline, decidedAtMs = storeNow,
  answeredOnDeadline = onDeadline, decidedCode = decidedCode, reversal = cjson.null, meta = ARGV[14]
}
rec.controlEntries = controlEntries
rec.control = controlHit or cjson.null
redis.call('SET', KEYS[3], cjson.encode(rec), 'EX', ARGV[10])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[11], '*', 'type', 'decision', 'urn', ARGV[2], 'ref', ARGV[1],
  'code', code, 'reason', reason, 'rule', ruleId, 'debit', ARGV[4], 'held', fmt(held))
local avail = ''
if available then avail = fmt(available) end
local hitJson = ''
if controlHit then hitJson = cjson.encode(controlHit) end
return {code, reason, ruleId, '0', avail, shadowHits, hitJson}
`

/**
 * Deadline compensation for one request attempt. Safe in either order with the attempt's authorize:
 * run first, it leaves a tombstone the authorize then replays (05, nothing held); run after, it releases
 * what that attempt's decision held and turns it into a 05.
 *
 * KEYS[1] customer hash  KEYS[2] decision record  KEYS[3] decision stream  KEYS[4..] the attempt's limit windows,
 * then the daily totals of its card controls
 * ARGV[1] reference  ARGV[2] urn  ARGV[3] attempt id  ARGV[4] fingerprint  ARGV[5] last4
 * ARGV[6] arrival epoch ms  ARGV[7] deadline epoch ms  ARGV[8] decision TTL s  ARGV[9] stream max length
 * Returns 'tombstoned' | 'released' | 'untouched'
 */
export const ABANDON_LUA = COMMON + `
local storeNow = storeNowMs()
local existing = redis.call('GET', KEYS[2])
if not existing then
  local rec = {
    urn = ARGV[2], reference = ARGV[1], last4 = ARGV[5], attempt = ARGV[3],
    code = '05', reason = 'deadline', ruleId = cjson.null,
    debit = '0', held = '0', released = '0', fingerprint = ARGV[4],
    shadowLimitHits = {}, limitEntries = {},
    arrivedAtMs = tonumber(ARGV[6]), deadlineAtMs = tonumber(ARGV[7]), decidedAtMs = storeNow,
    answeredOnDeadline = true, decidedCode = cjson.null, reversal = cjson.null, meta = cjson.null
  }
  redis.call('SET', KEYS[2], cjson.encode(rec), 'EX', ARGV[8])
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', 'type', 'abandon', 'urn', ARGV[2], 'ref', ARGV[1], 'released', '0')
  return 'tombstoned'
end
local rec = cjson.decode(existing)
if rec.attempt ~= ARGV[3] or rec.answeredOnDeadline == true then return 'untouched' end
local held = tonumber(rec.held)
if held > 0 then redis.call('HINCRBY', KEYS[1], 'available', held) end
for _, e in ipairs(rec.limitEntries) do redis.call('ZREM', e[1], e[2]) end
for _, e in ipairs(rec.controlEntries or {}) do giveBackDaily(e[1], tonumber(e[2])) end
rec.controlEntries = {}
rec.decidedCode = rec.code
rec.code = '05'
rec.reason = 'deadline'
rec.ruleId = cjson.null
rec.answeredOnDeadline = true
rec.released = fmt(tonumber(rec.released) + held)
rec.held = '0'
rec.limitEntries = {}
redis.call('SET', KEYS[2], cjson.encode(rec), 'KEEPTTL')
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[9], '*', 'type', 'abandon', 'urn', ARGV[2], 'ref', ARGV[1], 'released', fmt(held))
return 'released'
`

/**
 * Release an approved hold, whole or part, once. A full release removes the transaction from its limit
 * windows; a part release lowers the amount it counts for.
 *
 * KEYS[1] customer hash  KEYS[2] decision record  KEYS[3] decision stream  KEYS[4..] the decision's limit windows,
 * then the daily totals of its card controls (a release gives its amount back to them)
 * ARGV[1] amount to release, '' for all that is held   ARGV[2] stream max length
 * Returns {'OK', replayed '0'|'1', released, available} or {rejection code}
 */
export const REVERSE_LUA = COMMON + `
local existing = redis.call('GET', KEYS[2])
if not existing then return {'DECISION_NOT_FOUND'} end
local rec = cjson.decode(existing)
if type(rec.reversal) == 'table' then
  if rec.reversal.requested == ARGV[1] then
    return {'OK', '1', rec.reversal.amount, redis.call('HGET', KEYS[1], 'available') or '0'}
  end
  return {'ALREADY_REVERSED'}
end
if rec.code ~= '00' then return {'NOT_APPROVED'} end
local held = tonumber(rec.held)
local amt = held
if ARGV[1] ~= '' then amt = amount(ARGV[1]) end
if amt > held then return {'EXCEEDS_HOLD'} end
local available = redis.call('HINCRBY', KEYS[1], 'available', amt)
local left = held - amt
local kept = {}
for _, e in ipairs(rec.limitEntries) do
  local score = redis.call('ZSCORE', e[1], e[2])
  redis.call('ZREM', e[1], e[2])
  if left > 0 and score then
    local member = fmt(left) .. '|' .. rec.reference
    redis.call('ZADD', e[1], score, member)
    table.insert(kept, {e[1], member})
  end
end
rec.limitEntries = kept
local keptControls = {}
for _, e in ipairs(rec.controlEntries or {}) do
  giveBackDaily(e[1], amt)
  if left > 0 then table.insert(keptControls, {e[1], fmt(left)}) end
end
rec.controlEntries = keptControls
rec.held = fmt(left)
rec.released = fmt(tonumber(rec.released) + amt)
rec.reversal = { amount = fmt(amt), requested = ARGV[1], atMs = storeNowMs() }
redis.call('SET', KEYS[2], cjson.encode(rec), 'KEEPTTL')
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'type', 'reversal', 'urn', rec.urn, 'ref', rec.reference, 'released', fmt(amt))
return {'OK', '0', fmt(amt), fmt(available)}
`

/**
 * Credit or debit, idempotent on the reference; a debit never takes the balance below zero and a credit
 * never takes it past maxBalance.
 *
 * KEYS[1] customer hash  KEYS[2] the operation's record (its amount)  KEYS[3] decision stream
 * ARGV[1] 'credit' | 'debit'  ARGV[2] amount  ARGV[3] reference  ARGV[4] urn  ARGV[5] stream max length
 * ARGV[6] max balance  ARGV[7] how long the reference is kept, s (the decision retention)
 * Returns {'OK', replayed '0'|'1', available} or {rejection code}
 */
export const MONEY_OP_LUA = COMMON + `
local amt = amount(ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'CUSTOMER_NOT_FOUND'} end
local prior = redis.call('GET', KEYS[2])
if prior then
  if prior == ARGV[2] then return {'OK', '1', redis.call('HGET', KEYS[1], 'available') or '0'} end
  return {'REFERENCE_CONFLICT'}
end
local cur = tonumber(redis.call('HGET', KEYS[1], 'available') or '0')
local delta = amt
if ARGV[1] == 'debit' then
  if amt > cur then return {'INSUFFICIENT_FUNDS'} end
  delta = -amt
elseif cur + amt > tonumber(ARGV[6]) then
  return {'BALANCE_LIMIT'}
end
local available = redis.call('HINCRBY', KEYS[1], 'available', delta)
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[7])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '*', 'type', ARGV[1], 'urn', ARGV[4], 'ref', ARGV[3], 'amount', ARGV[2])
return {'OK', '0', fmt(available)}
`

/**
 * Create or update a customer; a new one starts ACTIVE with nothing available.
 * KEYS[1] customer hash  ARGV[1] status or ''  ARGV[2] '1' when ARGV[3] carries a customerId  ARGV[3] customerId
 */
export const PUT_CUSTOMER_LUA = `
redis.call('HSETNX', KEYS[1], 'available', '0')
redis.call('HSETNX', KEYS[1], 'status', 'ACTIVE')
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[1]) end
if ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'customerId', ARGV[3]) end
return 'OK'
`

/**
 * Register or update a card of an existing customer.
 * KEYS[1] customer hash  KEYS[2] cards hash  ARGV[1] last4  ARGV[2] status
 */
export const PUT_CARD_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 'CUSTOMER_NOT_FOUND' end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 'OK'
`

/**
 * Release a lifecycle lock only if the caller still owns it (compare and delete in one step).
 * KEYS[1] lock key  ARGV[1] owner token
 */
export const UNLOCK_LIFECYCLE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

/**
 * Read, and with field/value pairs also change, the card's own controls. Returns the settings before and
 * after, so the change can be reported with both. A card must be registered to carry controls.
 * KEYS[1] customer hash  KEYS[2] cards hash  KEYS[3] the card's own controls (hash `kind|field`)
 * ARGV[1] last4  ARGV[2..] field, value pairs to set ('1'|'0' for enabled; digits, or '' for no limit)
 * Returns {'OK', {before field, value, ...}, {after field, value, ...}} or {rejection code}
 */
export const CARD_CONTROLS_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'CUSTOMER_NOT_FOUND'} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {'CARD_NOT_FOUND'} end
local before = redis.call('HGETALL', KEYS[3])
if #ARGV < 3 then return {'OK', before, before} end
redis.call('HSET', KEYS[3], unpack(ARGV, 2))
return {'OK', before, redis.call('HGETALL', KEYS[3])}
`
