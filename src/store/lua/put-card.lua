--[[
  Register or update a card of an existing customer.

  KEYS[1] customer hash  KEYS[2] cards hash  KEYS[3] the bucket's stream
  ARGV[1] last4  ARGV[2] status  ARGV[3] urn  ARGV[4] backlog bound of the stream
  ARGV[5] audit context JSON or '' (see includes/audit.lua)   ARGV[6] how long audit records are kept, s
  Returns 'OK' or 'CUSTOMER_NOT_FOUND'
]]
--- @include "includes/common"
--- @include "includes/audit"

local auditing = auditOf(ARGV[5], ARGV[6])
if redis.call('EXISTS', KEYS[1]) == 0 then return 'CUSTOMER_NOT_FOUND' end
local previous = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
emit(KEYS[3], ARGV[4], 'card.updated', ARGV[3], { last4 = ARGV[1], status = ARGV[2], previous = previous or cjson.null })
local before = nil
if previous then before = { status = previous } end
audit(KEYS[3], ARGV[4], auditing, ARGV[3], before, { status = ARGV[2] })
return 'OK'
