--[[
  Release an approved hold, whole or part, once. A full release removes the transaction from its limit
  windows; a part release lowers the amount it counts for.

  KEYS[1] customer hash  KEYS[2] decision record  KEYS[3] decision stream  KEYS[4..] the decision's limit windows,
  then the daily totals of its card controls (a release gives its amount back to them)
  ARGV[1] amount to release, '' for all that is held   ARGV[2] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
  ARGV[3] audit context JSON or '' (see includes/audit.lua)   ARGV[4] how long audit records are kept, s
  ARGV[5] urn  ARGV[6] reference  ARGV[7] last4 (of the record: a compact one leaves them out)
  Returns {'OK', replayed '0'|'1', released, available} or {rejection code}
]]
--- @include "includes/common"
--- @include "includes/records"
--- @include "includes/limits"
--- @include "includes/audit"

local auditing = auditOf(ARGV[3], ARGV[4])
local existing = redis.call('GET', KEYS[2])
if not existing then return {'DECISION_NOT_FOUND'} end
local rec = decodeRecord(existing, KEYS[2], ARGV[5], ARGV[6], ARGV[7])
if type(rec.reversal) == 'table' then
  if rec.reversal.requested == ARGV[1] then
    return {'OK', '1', rec.reversal.amount, redis.call('HGET', KEYS[1], 'available') or '0'}
  end
  return {'ALREADY_REVERSED'}
end
if rec.code ~= '00' then return {'NOT_APPROVED'} end
local held = tonumber(rec.held)
local amt = held
if ARGV[1] ~= '' then amt = amount(ARGV[1]) end
if amt > held then return {'EXCEEDS_HOLD'} end
-- a stand-in approval of an unknown urn is a 00 holding nothing, and no customer: HINCRBY would make one
local available = 0
if redis.call('EXISTS', KEYS[1]) == 1 then available = redis.call('HINCRBY', KEYS[1], 'available', amt) end
local left = held - amt
holdRelease(KEYS[3], KEYS[2], KEYS[1], rec.last4, amt, left)
local kept = {}
for _, e in ipairs(rec.limitEntries) do
  local member = windowRemove(e[1], e[2], left, rec.reference)
  if member then table.insert(kept, {e[1], member}) end
end
rec.limitEntries = kept
local keptControls = {}
for _, e in ipairs(rec.controlEntries or {}) do
  giveBackDaily(e[1], amt)
  if left > 0 then table.insert(keptControls, {e[1], fmt(left)}) end
end
rec.controlEntries = keptControls
rec.held = fmt(left)
rec.released = fmt(tonumber(rec.released) + amt)
rec.reversal = { amount = fmt(amt), requested = ARGV[1], atMs = storeNowMs() }
redis.call('SET', KEYS[2], encodeRecord(rec, KEYS[2]), 'KEEPTTL')
emit(KEYS[3], ARGV[2], 'decision.reversed', rec.urn, {
  reference = rec.reference, last4 = rec.last4, released = fmt(amt), held = fmt(left), available = fmt(available)
})
audit(KEYS[3], ARGV[2], auditing, rec.urn, { held = fmt(held), available = fmt(available - amt) },
  { held = fmt(left), released = rec.released, available = fmt(available) })
return {'OK', '0', fmt(amt), fmt(available)}
