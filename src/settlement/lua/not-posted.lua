--[[
  An approval of a complete statement's period that no statement posted (final mode): an exception of kind
  approved_not_posted, once, whose accept releases what it still debits. A hold (holds mode) is left to
  expiry; an approval released, reversed or cleared is not one.

  KEYS[1] the decision  KEYS[2] the bucket's stream
  ARGV[1] urn  ARGV[2] reference  ARGV[3] statement id  ARGV[4] bucket number  ARGV[5] backlog bound
  Returns the exception's id, or '' when there is none to open
]]
--- @include "../../store/lua/includes/common"
--- @include "../../store/lua/includes/records"
--- @include "includes/settlement"

local raw = redis.call('GET', KEYS[1])
if not raw then return '' end
local rec = decodeRecord(raw, KEYS[1], ARGV[1], ARGV[2], recordLast4(raw))
local held = tonumber(rec.held)
if rec.code ~= '00' or held <= 0 then return '' end
local tail = tailOf(KEYS[1])
if redis.call('ZSCORE', KEYS[2] .. ':h', tail .. ':' .. keyPart(rec.last4)) then return '' end
local tag = tagOf(KEYS[2])
if tonumber(readState(tag, tail).cl or '0') > 0 then return '' end
local id = 'b' .. ARGV[4] .. '~anp~' .. tail
local key = tag .. ':x:' .. id
if redis.call('EXISTS', key) == 1 then return '' end
local now = storeNowMs()
local x = { id = id, kind = 'approved_not_posted', status = 'open', urn = ARGV[1], reference = ARGV[2], last4 = rec.last4,
  platformId = '', statementId = ARGV[3], postingType = '', outcome = 'approved_not_posted', amount = fmt(held),
  accept = { action = 'release', amount = fmt(held) }, detail = 'approved here, on no statement of a complete period', createdAtMs = now }
redis.call('SET', key, cjson.encode(x))
redis.call('ZADD', KEYS[2] .. ':xo', now, id)
redis.call('ZADD', KEYS[2] .. ':xa', now, id)
emit(KEYS[2], ARGV[5], 'reconciliation.exception', ARGV[1], x)
return id
