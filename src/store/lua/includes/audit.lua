--[[
  The audit trail of the admin listener's changes, written in the same script as the change (so there is no
  change without its record). Needs common.lua. `ctx` is the route's JSON (id, keyId, route, scope,
  requestId, target), or '' for a change not made through an admin route (the card lifecycle's money moves,
  audited by their caller). The record goes to the bucket's audit index, a sorted set scored by the store's
  clock under a key derived from the stream's (same slot), records past the retention dropped on the way;
  and to the outbox as an `audit.recorded` event. before/after hold states only (balances, statuses,
  settings), never card data.
]]

local function writeAudit (stream, backlogMax, rec, keepS, urn)
  local now = storeNowMs()
  local keepMs = tonumber(keepS) * 1000
  rec.atMs = now
  local key = stream .. ':a'
  redis.call('ZADD', key, now, cjson.encode(rec))
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. fmt(now - keepMs))
  redis.call('PEXPIRE', key, keepMs)
  emit(stream, backlogMax, 'audit.recorded', urn, rec)
  return now
end
-- Read at the top of a script, before it writes anything: a script that fails after a write is not undone,
-- and its caller would be told nothing was done. nil: no context, nothing to audit.
local function auditOf (ctx, keepS)
  if not ctx or ctx == '' then return nil end
  local ok, rec = pcall(cjson.decode, ctx)
  local keep = tonumber(keepS)
  if not ok or type(rec) ~= 'table' or not keep or keep <= 0 then
    error('EXTAUTH_ASSERT audit context must be a JSON object and its retention a positive number of seconds')
  end
  return { rec = rec, keepS = keep }
end
local function audit (stream, backlogMax, auditing, urn, before, after)
  if not auditing then return end
  local rec = auditing.rec
  rec.outcome = 'done'
  rec.before = before or cjson.null
  rec.after = after or cjson.null
  writeAudit(stream, backlogMax, rec, auditing.keepS, urn)
end
-- a hash's HGETALL pairs as a table
local function pairsOf (flat)
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end
