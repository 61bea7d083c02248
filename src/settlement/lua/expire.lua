--[[
  Expires a bucket's holds due at ARGV[1]: each taken off the index and released in this one step, so that
  any number of instances may run it at once and each hold expires once.

  KEYS[1] the bucket's stream  ARGV[1] as of, epoch ms  ARGV[2] how many at most  ARGV[3] backlog bound
  Returns {expired, more '0'|'1'}
]]
--- @include "../../store/lua/includes/common"
--- @include "../../store/lua/includes/records"
--- @include "../../store/lua/includes/limits"
--- @include "includes/settlement"

callStart()
local stream = KEYS[1]
local tag = tagOf(stream)
local due = redis.call('ZRANGEBYSCORE', stream .. ':h', '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local expired = 0
for _, member in ipairs(due) do
  local urnp, refp, l4p = string.match(member, '^([^:]*):([^:]*):([^:]*)$')
  local dkey = tag .. ':d:' .. urnp .. ':' .. refp
  local ckey = tag .. ':c:' .. urnp
  local raw = redis.call('GET', dkey)
  local rec = nil
  if raw then
    rec = decodeRecord(raw, dkey, unpart(urnp), unpart(refp), recordLast4(raw))
    -- the decision under the member's key may be another one than the member's (holdForget in records.lua):
    -- an approval of the same card, decided when the member's was (a member written before keeps no time)
    local at = redis.call('HGET', stream .. ':ha', member .. ':d')
    if rec.code ~= '00' or keyPart(rec.last4) ~= l4p or (at and tonumber(at) ~= rec.decidedAtMs) then rec = nil end
  end
  if rec then
    local held = tonumber(rec.held)
    settleRecord(rec, dkey, ckey, stream, held, 0)
    local available = redis.call('HINCRBY', ckey, 'available', held)
    local st = readState(tag, urnp .. ':' .. refp)
    st.ex = tonumber(ARGV[1])
    writeState(tag, urnp .. ':' .. refp, dkey, st)
    emit(stream, ARGV[3], 'authorization.expired', rec.urn, {
      reference = rec.reference, last4 = rec.last4, released = fmt(held), available = fmt(available),
      held = redis.call('HGET', ckey, 'held') or '0'
    })
    expired = expired + 1
  else
    -- its decision is gone (kept past the expiry by the retention: no expiry ran that long), or the key holds
    -- another decision: what the index says this hold holds goes back all the same, and nothing of the other
    local amt = tonumber(redis.call('HGET', stream .. ':ha', member) or '0')
    if amt > 0 and redis.call('EXISTS', ckey) == 1 then
      redis.call('HINCRBY', ckey, 'held', -amt)
      local available = redis.call('HINCRBY', ckey, 'available', amt)
      emit(stream, ARGV[3], 'authorization.expired', unpart(urnp), {
        reference = unpart(refp), last4 = unpart(l4p), released = fmt(amt), available = fmt(available),
        held = redis.call('HGET', ckey, 'held') or '0'
      })
      expired = expired + 1
    end
  end
  holdForget(stream, member)
end
local more = '0'
if #due == tonumber(ARGV[2]) then more = '1' end
return {expired, more}
