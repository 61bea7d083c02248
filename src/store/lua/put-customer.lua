--[[
  Create or update a customer; a new one starts ACTIVE with nothing available.

  KEYS[1] customer hash  KEYS[2] the bucket's stream
  ARGV[1] status or ''  ARGV[2] '1' when ARGV[3] carries a customerId  ARGV[3] customerId  ARGV[4] urn
  ARGV[5] backlog bound of the stream   ARGV[6] audit context JSON or '' (see includes/audit.lua)   ARGV[7] how long audit records are kept, s
  Returns 'OK'
]]
--- @include "includes/common"
--- @include "includes/audit"

local auditing = auditOf(ARGV[6], ARGV[7])
local was = redis.call('HMGET', KEYS[1], 'status', 'customerId', 'available')
local created = redis.call('HSETNX', KEYS[1], 'available', '0') == 1
redis.call('HSETNX', KEYS[1], 'status', 'ACTIVE')
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[1]) end
if ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'customerId', ARGV[3]) end
local c = redis.call('HMGET', KEYS[1], 'status', 'customerId', 'available')
emit(KEYS[2], ARGV[5], 'customer.updated', ARGV[4], { created = created, status = c[1], customerId = c[2] or cjson.null, available = c[3] })
local before = nil
if not created then before = { status = was[1], customerId = was[2] or cjson.null, available = was[3] } end
audit(KEYS[2], ARGV[5], auditing, ARGV[4], before, { status = c[1], customerId = c[2] or cjson.null, available = c[3] })
return 'OK'
