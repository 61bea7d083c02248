--[[
  Read, and with field/value pairs also change, the card's own controls. Returns the settings before and
  after, so the change can be reported with both. A card must be registered to carry controls.

  KEYS[1] customer hash  KEYS[2] cards hash  KEYS[3] the card's own controls (hash `kind|field`)  KEYS[4] the bucket's stream
  ARGV[1] last4  ARGV[2] urn  ARGV[3] backlog bound of the stream
  ARGV[4] audit context JSON or '' (see includes/audit.lua)   ARGV[5] how long audit records are kept, s
  ARGV[6..] field, value pairs to set ('1'|'0' for enabled; digits, or '' for no limit)
  Returns {'OK', {before field, value, ...}, {after field, value, ...}} or {rejection code}
]]
--- @include "includes/common"
--- @include "includes/audit"

local auditing = auditOf(ARGV[4], ARGV[5])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'CUSTOMER_NOT_FOUND'} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {'CARD_NOT_FOUND'} end
local before = redis.call('HGETALL', KEYS[3])
if #ARGV < 7 then return {'OK', before, before} end
redis.call('HSET', KEYS[3], unpack(ARGV, 6))
local after = redis.call('HGETALL', KEYS[3])
emit(KEYS[4], ARGV[3], 'card.controls.updated', ARGV[2], { last4 = ARGV[1], before = before, after = after })
audit(KEYS[4], ARGV[3], auditing, ARGV[2], pairsOf(before), pairsOf(after))
return {'OK', before, after}
