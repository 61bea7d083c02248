--[[
  One audit record written alone: a change that is not one store script (a rule reload, a card-lifecycle
  call, an event sent again) or a call refused for a missing scope, written right after (or instead of) it.

  KEYS[1] the bucket's stream   ARGV[1] backlog bound of the stream   ARGV[2] record JSON (context, outcome,
  before, after)   ARGV[3] how long records are kept, s   ARGV[4] urn or ''
  Returns the store's clock (ms) the record carries
]]
--- @include "includes/common"
--- @include "includes/audit"

return writeAudit(KEYS[1], ARGV[1], cjson.decode(ARGV[2]), ARGV[3], ARGV[4])
