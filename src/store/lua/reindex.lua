--[[
  Puts decisions stored before the reference index existed into it (`extauth decisions reindex`): for each
  time-index member whose decision is still kept, its reference entry (added once, as `journal` in
  includes/common.lua does).

  KEYS[1] the bucket's stream (the indexes' keys derive from it, same slot)
  ARGV[1..] time-index members '<urn>:<reference>'
  Returns how many were still kept
]]
--- @include "includes/common"

local decisions = string.sub(KEYS[1], 1, -2) .. 'd:'
local kept = 0
for i = 1, #ARGV do
  if redis.call('EXISTS', decisions .. ARGV[i]) == 1 then
    refIndex(KEYS[1], ARGV[i], true)
    kept = kept + 1
  end
end
return kept
