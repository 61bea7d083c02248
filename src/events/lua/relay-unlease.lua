--[[
  Give up a bucket's relay lease only if the caller still holds it (compare and delete in one step).

  KEYS[1] the lease key  ARGV[1] owner token
  Returns 1 when given up, 0 when another holds it or it is gone
]]

if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
