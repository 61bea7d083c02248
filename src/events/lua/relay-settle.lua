--[[
  Acknowledge and trim in one step: nothing is trimmed that is not delivered or parked.

  KEYS[1] the bucket's stream
  ARGV[1] the first id kept (XTRIM MINID), or '' to trim nothing   ARGV[2..] ids to acknowledge
  The group 'relay' is GROUP of src/events/outbox.ts (test/store/lua-files.test.ts holds it to it).
  Returns 1
]]

if #ARGV > 1 then redis.call('XACK', KEYS[1], 'relay', unpack(ARGV, 2)) end
if ARGV[1] ~= '' then redis.call('XTRIM', KEYS[1], 'MINID', ARGV[1]) end
return 1
