--[[
  Marks an exception resolved, once: the same action again is a replay, another one a conflict.

  KEYS[1] the exception  KEYS[2] the bucket's stream  ARGV[1] resolution JSON {action, amount, reason, keyId}
  ARGV[2] backlog bound  ARGV[3] audit context JSON or '' (see the store's includes/audit.lua)
  ARGV[4] how long audit records are kept, s
  Returns {'OK'|'REPLAY', exception JSON} or {rejection code}
]]
--- @include "../../store/lua/includes/common"
--- @include "../../store/lua/includes/audit"

local auditing = auditOf(ARGV[3], ARGV[4])
local raw = redis.call('GET', KEYS[1])
if not raw then return {'EXCEPTION_NOT_FOUND'} end
local x = cjson.decode(raw)
local r = cjson.decode(ARGV[1])
if x.status == 'resolved' then
  if x.resolution.action == r.action and x.resolution.amount == r.amount then return {'REPLAY', raw} end
  return {'ALREADY_RESOLVED'}
end
r.atMs = storeNowMs()
local before = { status = x.status }
x.status = 'resolved'
x.resolution = r
local out = cjson.encode(x)
redis.call('SET', KEYS[1], out)
redis.call('ZREM', KEYS[2] .. ':xo', x.id)
emit(KEYS[2], ARGV[2], 'reconciliation.resolved', x.urn, x)
audit(KEYS[2], ARGV[2], auditing, x.urn, before, { status = 'resolved', action = r.action, amount = r.amount })
return {'OK', out}
