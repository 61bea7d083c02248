--[[
  Release a lifecycle lock only if the caller still owns it (compare and delete in one step).

  KEYS[1] lock key  ARGV[1] owner token
  Returns 1 when released, 0 when another owner holds it or it is gone
]]

if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
