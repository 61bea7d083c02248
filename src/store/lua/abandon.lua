--[[
  Deadline compensation for one request attempt. Safe in either order with the attempt's authorize:
  run first, it leaves a tombstone the authorize then replays (05, nothing held); run after, it releases
  what that attempt's decision held and turns it into a 05.

  KEYS[1] customer hash  KEYS[2] decision record  KEYS[3] decision stream  KEYS[4..] the attempt's limit windows,
  then the daily totals of its card controls
  ARGV[1] reference  ARGV[2] urn  ARGV[3] attempt id  ARGV[4] fingerprint  ARGV[5] last4
  ARGV[6] arrival epoch ms  ARGV[7] deadline epoch ms  ARGV[8] decision TTL s  ARGV[9] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
  ARGV[10] '0': release only, no tombstone when there is no decision (the attempt never reached the store)
  ARGV[11] the tombstone's rest (the request's side, packed by recordRest, without meta); '': format 1
  Returns 'tombstoned' | 'released' | 'untouched'
]]
--- @include "includes/common"
--- @include "includes/records"
--- @include "includes/limits"

local storeNow = storeNowMs()
local existing = redis.call('GET', KEYS[2])
if not existing then
  if ARGV[10] == '0' then return 'untouched' end
  local rec = deadlineRecord(ARGV[2], ARGV[1], ARGV[5], ARGV[3], ARGV[4], tonumber(ARGV[6]), tonumber(ARGV[7]), storeNow)
  if ARGV[11] ~= '' then rec.rest = ARGV[11] end
  redis.call('SET', KEYS[2], encodeRecord(rec, KEYS[2]), 'EX', ARGV[8])
  journal(KEYS[3], string.match(KEYS[2], '}:d:(.*)$'), rec.arrivedAtMs, ARGV[8])
  -- the guard answered 05 before anything was decided: that answer is the decision
  emit(KEYS[3], ARGV[9], 'decision.created', ARGV[2], createdEvent(rec, cjson.null))
  return 'tombstoned'
end
local rec = decodeRecord(existing, KEYS[2], ARGV[2], ARGV[1], ARGV[5])
if rec.answeredOnDeadline == true then return 'untouched' end
if rec.attempt ~= ARGV[3] then
  -- a later attempt at the same transaction was answered 05: the platform acts on that, so it owns the
  -- decision; an earlier attempt's compensation, or another transaction's, changes nothing
  -- (strictly later: of two attempts arriving in one millisecond, the one the store saw last keeps it)
  if rec.fingerprint ~= ARGV[4] or tonumber(ARGV[6]) <= tonumber(rec.attemptArrivedAtMs or rec.arrivedAtMs) then return 'untouched' end
  rec.attempt = ARGV[3]
  rec.attemptArrivedAtMs = tonumber(ARGV[6])
end
local held = tonumber(rec.held)
if held > 0 then redis.call('HINCRBY', KEYS[1], 'available', held) end
holdRelease(KEYS[3], KEYS[2], KEYS[1], rec.last4, held, 0)
for _, e in ipairs(rec.limitEntries) do windowRemove(e[1], e[2], 0, rec.reference) end
for _, e in ipairs(rec.controlEntries or {}) do giveBackDaily(e[1], tonumber(e[2])) end
rec.controlEntries = {}
rec.decidedCode = rec.code
rec.code = '05'
rec.reason = 'deadline'
rec.ruleId = cjson.null
rec.answeredOnDeadline = true
rec.released = fmt(tonumber(rec.released) + held)
rec.held = '0'
rec.limitEntries = {}
redis.call('SET', KEYS[2], encodeRecord(rec, KEYS[2]), 'KEEPTTL')
emit(KEYS[3], ARGV[9], 'decision.released', ARGV[2], {
  reference = ARGV[1], last4 = rec.last4, decidedCode = rec.decidedCode, released = fmt(held),
  available = fmt(tonumber(redis.call('HGET', KEYS[1], 'available') or '0'))
})
return 'released'
