--[[
  An exception opened outside a statement (a lifecycle record left FAILED, a stand-in replay below zero), once:
  nothing when its id exists.

  KEYS[1] the exception  KEYS[2] the bucket's stream
  ARGV[1] the exception JSON without createdAtMs  ARGV[2] backlog bound
  Returns 1 when it was opened, 0 when it was there
]]
--- @include "../../store/lua/includes/common"

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local x = cjson.decode(ARGV[1])
local now = storeNowMs()
x.createdAtMs = now
redis.call('SET', KEYS[1], cjson.encode(x))
redis.call('ZADD', KEYS[2] .. ':xo', now, x.id)
redis.call('ZADD', KEYS[2] .. ':xa', now, x.id)
emit(KEYS[2], ARGV[2], 'reconciliation.exception', x.urn, x)
return 1
