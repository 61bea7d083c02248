--[[
  Lookup by reference alone on a single Redis (a Cluster cannot run one script over many slots; there the
  reader sends one HGET per bucket): one field of every bucket's reference index in one step.

  KEYS[1..n] the reference-index hash of each bucket (the one of the reference's shard)  ARGV[1] the reference, escaped
  Returns {i, urns, ...}: the position in KEYS of each hash holding the reference, and its value
]]

local out = {}
for i = 1, #KEYS do
  local v = redis.call('HGET', KEYS[i], ARGV[1])
  if v then
    table.insert(out, i - 1)
    table.insert(out, v)
  end
end
return out
