--[[
  Credit or debit, idempotent on the reference; a debit never takes the balance below zero and a credit
  never takes it past maxBalance. A 'note' moves no money: it records, once per reference, that an operation
  whose money already moved has completed, and writes that event (an unload's completion).

  KEYS[1] customer hash  KEYS[2] the operation's record (its amount)  KEYS[3] decision stream
  ARGV[1] 'credit' | 'debit' | 'note'  ARGV[2] amount ('0' for a note)  ARGV[3] reference  ARGV[4] urn  ARGV[5] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
  ARGV[6] max balance  ARGV[7] how long the reference is kept, s (the decision retention)
  ARGV[8] event type, '' for funds.credited / funds.debited (a note names its own)   ARGV[9] the event's details (JSON) or ''
  ARGV[10] audit context JSON or '' (see includes/audit.lua)   ARGV[11] how long audit records are kept, s
  Returns {'OK', replayed '0'|'1', available} or {rejection code} ({'INSUFFICIENT_FUNDS', available} for a debit)
]]
--- @include "includes/common"
--- @include "includes/audit"

local auditing = auditOf(ARGV[10], ARGV[11])
local note = ARGV[1] == 'note'
local amt = amount(ARGV[2], note)
if redis.call('EXISTS', KEYS[1]) == 0 then return {'CUSTOMER_NOT_FOUND'} end
local prior = redis.call('GET', KEYS[2])
if prior then
  if prior == ARGV[2] then return {'OK', '1', redis.call('HGET', KEYS[1], 'available') or '0'} end
  return {'REFERENCE_CONFLICT'}
end
local cur = tonumber(redis.call('HGET', KEYS[1], 'available') or '0')
local delta = amt
if ARGV[1] == 'debit' then
  if amt > cur then return {'INSUFFICIENT_FUNDS', fmt(cur)} end
  delta = -amt
elseif ARGV[1] == 'credit' and cur + amt > tonumber(ARGV[6]) then
  return {'BALANCE_LIMIT'}
end
local available = cur
if not note then available = redis.call('HINCRBY', KEYS[1], 'available', delta) end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[7])
local etype = ARGV[8]
if not etype or etype == '' then
  if ARGV[1] == 'debit' then etype = 'funds.debited' else etype = 'funds.credited' end
end
local data = { reference = ARGV[3], amount = ARGV[2], available = fmt(available) }
if note then data.amount = nil end
emit(KEYS[3], ARGV[5], etype, ARGV[4], data, ARGV[9])
audit(KEYS[3], ARGV[5], auditing, ARGV[4], { available = fmt(cur) }, { available = fmt(available) })
return {'OK', '0', fmt(available)}
