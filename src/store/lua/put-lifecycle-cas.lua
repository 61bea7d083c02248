--[[
  Write a lifecycle record only if the stored one is at the expected revision (its JSON field `rev`; 0
  when absent or without one), so a call that outlived its lock cannot overwrite a newer call's record.

  KEYS[1] record key  ARGV[1] new JSON  ARGV[2] expected revision  ARGV[3] ttl seconds, or 0: kept without
  expiry (a record not final yet; the write clears any ttl the record had)
  Returns 1 when written, 0 when the stored revision differs
]]

local cur = redis.call('GET', KEYS[1])
local rev = 0
if cur then
  local ok, rec = pcall(cjson.decode, cur)
  if ok and type(rec) == 'table' and type(rec.rev) == 'number' then rev = rec.rev end
end
if rev ~= tonumber(ARGV[2]) then return 0 end
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1
