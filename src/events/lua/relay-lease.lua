--[[
  Take or keep a bucket's relay lease: renewed when the caller holds it, taken when nobody does.

  KEYS[1] the lease key  ARGV[1] owner token  ARGV[2] lease ttl ms
  Returns 1 when the caller holds the lease, 0 when another does
]]

if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 end
return 0
