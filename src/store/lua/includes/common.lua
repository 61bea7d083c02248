--[[
  Helpers of every store script. Each script runs atomically on the one slot of a customer's bucket (every
  KEYS[i] carries the same hash tag). Amounts are integer strings; Lua numbers are doubles, exact to 2^53,
  which the callers never exceed (see MAX_BALANCE in src/store/record.ts).

  Numbers go back to strings with string.format('%d'): tostring() would give "1e+15".

  The comments below go to Redis with the code and name the parts as they were named in TypeScript:
  RECORDS is includes/records.lua.
]]

local function fmt (n) return string.format('%d', n) end
-- Gives an amount back to a card control's daily total; a total back at zero is removed, so a released
-- approval leaves no trace. A total already expired (the day is over) stays gone.
local function giveBackDaily (key, released)
  local cur = tonumber(redis.call('GET', key) or '0')
  if cur <= 0 then return end
  local left = cur - released
  if left <= 0 then redis.call('DEL', key) else redis.call('SET', key, fmt(left), 'KEEPTTL') end
end
-- A programmer error, never an operating one: the caller asserted the same before sending. The digits as
-- a safe integer's are written (no leading zero): scripts pass them on to Redis as they are.
local function amount (s, zeroOk)
  local n = tonumber(s)
  if type(s) ~= 'string' or not (s == '0' or string.match(s, '^[1-9]%d*$')) or not n or n > 9007199254740991 or (n == 0 and not zeroOk) then
    error('EXTAUTH_ASSERT amount must be a safe positive integer, got ' .. tostring(s))
  end
  return n
end
-- The outbox: an event goes to the bucket's stream in the same script as the change it reports, so there is
-- no change without its event and no event without its change. Delivered entries are trimmed by the relay;
-- past the backlog bound the oldest are dropped here, and counted in a key of the same bucket (same slot).
-- Fields: t type, u urn, d the script's data (JSON), x the caller's data (JSON, optional; a decision's is the
-- record's rest, see src/store/outbox-entry.ts).
-- data: a table, or its JSON already put together.
local function emit (stream, backlogMax, etype, urn, data, extra)
  if type(data) ~= 'string' then data = cjson.encode(data) end
  if extra and extra ~= '' then
    redis.call('XADD', stream, '*', 't', etype, 'u', urn, 'd', data, 'x', extra)
  else
    redis.call('XADD', stream, '*', 't', etype, 'u', urn, 'd', data)
  end
  local max = tonumber(backlogMax)
  if max and max > 0 and redis.call('XLEN', stream) > max then
    local dropped = redis.call('XTRIM', stream, 'MAXLEN', max)
    if dropped > 0 then redis.call('INCRBY', stream .. ':dropped', dropped) end
  end
end
-- The deadline's 05 recorded before anything was decided (the abandon script's tombstone): nothing held,
-- nothing counted (deadlineRecord in src/store/record.ts is the memory store's). The authorize script writes
-- a decision's record from parts, in the same format (see RECORDS).
local function deadlineRecord (urn, reference, last4, attempt, fingerprint, arrivedAtMs, deadlineAtMs, decidedAtMs)
  return {
    urn = urn, reference = reference, last4 = last4, attempt = attempt, fingerprint = fingerprint,
    code = '05', reason = 'deadline', ruleId = cjson.null, debit = '0', held = '0', released = '0',
    shadowLimitHits = {}, limitEntries = {}, arrivedAtMs = arrivedAtMs, deadlineAtMs = deadlineAtMs, decidedAtMs = decidedAtMs,
    answeredOnDeadline = true, decidedCode = cjson.null, reversal = cjson.null, meta = cjson.null
  }
end
-- The decision.created event's data: what the record says, and the available balance the script saw
-- (createdEventOf in src/store/record.ts; the authorize script puts the same fields together from parts).
local function createdEvent (rec, available)
  return {
    reference = rec.reference, last4 = rec.last4, code = rec.code, reason = rec.reason, ruleId = rec.ruleId,
    control = rec.control or cjson.null, debit = rec.debit, held = rec.held, available = available,
    shadowLimitHits = rec.shadowLimitHits, decidedCode = rec.decidedCode or cjson.null,
    answeredOnDeadline = rec.answeredOnDeadline, arrivedAtMs = rec.arrivedAtMs, decidedAtMs = rec.decidedAtMs
  }
end
-- The bucket's reference index: 16 hashes '<stream>:r:<shard>' of reference -> the urns (escaped, joined by
-- ':') with a decision of that reference in the bucket; the shard is a sum over the reference's bytes (refShard
-- in keys.ts). Lookup by reference alone reads one field per bucket. Same slot as the stream.
-- key: that hash, when the caller named it (the authorize script's last key), else it is summed here.
local function refIndex (stream, member, add, key)
  local sep = string.find(member, ':', 1, true)
  local urn, ref = string.sub(member, 1, sep - 1), string.sub(member, sep + 1)
  if not key then
    local h = 0
    for i = 1, #ref do h = (h * 31 + string.byte(ref, i)) % 65521 end
    key = stream .. ':r:' .. fmt(h % 16)
  end
  if add then
    -- one call in the usual case: the reference is new in the bucket
    if redis.call('HSETNX', key, ref, urn) == 1 then return end
    local cur = redis.call('HGET', key, ref)
    for u in string.gmatch(cur, '[^:]+') do if u == urn then return end end
    redis.call('HSET', key, ref, cur .. ':' .. urn)
    return
  end
  local cur = redis.call('HGET', key, ref)
  if cur then
    local left = {}
    for u in string.gmatch(cur, '[^:]+') do if u ~= urn then table.insert(left, u) end end
    if #left == 0 then redis.call('HDEL', key, ref) else redis.call('HSET', key, ref, table.concat(left, ':')) end
  end
end
-- The journal's time index of the bucket: member '<urn>:<reference>' (the decision key's tail), scored by
-- arrival, and the reference index, both written with the decision. An entry leaves both once its decision is
-- gone (expired): of the entries older than the retention, the oldest few are checked on the way, and a
-- decision still kept (a longer ttl, for a limit's window) stops the trim until it expires. So an index never
-- lacks a stored decision, and never holds one long after it expired. A key derived from the stream's, same slot.
-- arrivedMs: epoch ms, a number or its digits (the digits go to ZADD as they are, not formatted again)
local function journal (stream, member, arrivedMs, keepS, refKey)
  local key = stream .. ':j'
  local decisions = string.sub(stream, 1, -2) .. 'd:'
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. fmt(arrivedMs - tonumber(keepS) * 1000), 'LIMIT', 0, 8)) do
    if old ~= member and redis.call('EXISTS', decisions .. old) == 1 then break end
    redis.call('ZREM', key, old)
    refIndex(stream, old, false)
  end
  redis.call('ZADD', key, arrivedMs, member)
  refIndex(stream, member, true, refKey)
end
local function storeNowMs ()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
