--[[
  Restart a lifecycle lock's ttl only if the caller still owns it.

  KEYS[1] lock key  ARGV[1] owner token  ARGV[2] ttl ms
  Returns 1 when renewed, 0 when another owner holds it or it is gone
]]

if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
