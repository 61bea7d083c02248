--[[
  Write a lifecycle record, and in the same step add it to its customers' indexes (a transfer: both sides).
  With mode `cas` only if the stored one is at the expected revision (its JSON field `rev`; 0 when absent
  or without one), so a call that outlived its lock cannot overwrite a newer call's record; `nx` only if
  there is none; `set` whatever is there; `index` writes no record: every key is an index (on a Cluster the
  customers' indexes are in other slots than the record, and are written this way once it is saved).

  KEYS[1] record key (an index key with mode `index`)  KEYS[2..] the customers' index keys (sorted sets)
  ARGV[1] new JSON  ARGV[2] mode: cas | nx | set | index  ARGV[3] expected revision (cas)
  ARGV[4] ttl seconds, or 0: kept without expiry (a record not final yet; the write clears any ttl it had)
  ARGV[5] index member `<kind>:<id>`  ARGV[6] entries an index keeps at most  ARGV[7] an index's ttl, s
  Returns 1 when written, 0 when not (cas: the stored revision differs; nx: a record is there)
]]

local mode = ARGV[2]
local first = 2
if mode == 'index' then
  first = 1
else
  local cur = redis.call('GET', KEYS[1])
  if mode == 'nx' and cur then return 0 end
  if mode == 'cas' then
    local rev = 0
    if cur then
      local ok, rec = pcall(cjson.decode, cur)
      if ok and type(rec) == 'table' and type(rec.rev) == 'number' then rev = rec.rev end
    end
    if rev ~= tonumber(ARGV[3]) then return 0 end
  end
  if tonumber(ARGV[4]) > 0 then
    redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
  else
    redis.call('SET', KEYS[1], ARGV[1])
  end
end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = first, #KEYS do
  -- NX: the entry keeps the time of the record's first save
  redis.call('ZADD', KEYS[i], 'NX', nowMs, ARGV[5])
  redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -(tonumber(ARGV[6]) + 1))
  redis.call('EXPIRE', KEYS[i], ARGV[7])
end
return 1
