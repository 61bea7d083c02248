// The settlement's scripts (docs/operations/settlement.md): a posting of the platform's statement applied to
// one customer, the expiry of a bucket's due holds, and an exception's resolution. Each runs atomically on one
// bucket's slot, with the helpers of the store's scripts (src/store/lua.ts); the keys it derives from the
// bucket's stream or the decision's key carry the same hash tag.
//
// Keys of a bucket (tag '<prefix>{b<n>}', stream '<tag>:s'):
//   '<stream>:h'     the open holds, member '<decision key tail>:<last4>' scored by expiry (written by authorize)
//   '<tag>:ds:<tail>' a decision's settlement: JSON {cl: cleared amount, ex: expired at ms}; kept as the decision
//   '<tag>:p:<platformId>' a posting applied: JSON {f: fingerprint, o: outcome, s: statement, x: exception ids}
//   '<tag>:x:<id>'   an exception (JSON); '<stream>:xo' the open ones, '<stream>:xa' all, scored by creation
import { AUDIT, COMMON, LIMITS, RECORDS } from '../store/lua.js'

const SETTLEMENT = `
local function unpart (v) return (string.gsub(string.gsub(v, '%%3A', ':'), '%%25', '%%')) end
-- the last four digits a record was decided for (format 2 keeps them first in its rest)
local function recordLast4 (raw)
  if string.sub(raw, 1, 1) == '{' then return cjson.decode(raw).last4 end
  local nl = string.find(raw, '\\n', 1, true)
  return cjson.decode(string.sub(raw, nl + 1))[1]
end
local function tagOf (stream) return string.sub(stream, 1, -3) end
local function tailOf (dkey) return string.match(dkey, '}:d:(.*)$') end
-- a decision's settlement state, kept as long as the decision
local function readState (tag, tail)
  local raw = redis.call('GET', tag .. ':ds:' .. tail)
  if raw then return cjson.decode(raw) end
  return {}
end
local function writeState (tag, tail, dkey, st)
  local key = tag .. ':ds:' .. tail
  redis.call('SET', key, cjson.encode(st))
  local ttl = redis.call('PTTL', dkey)
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
end
-- Releases 'rel' of what a decision holds, keeping 'keep' of it counted (a clearing keeps what it posts, a
-- release keeps nothing): limit-window entries and daily totals as a reversal adjusts them; the record's held
-- and released; an open hold leaves the index with 'fromHold' taken off the customer's held.
local function settleRecord (rec, dkey, ckey, stream, rel, keep)
  local held = tonumber(rec.held)
  local member = tailOf(dkey) .. ':' .. keyPart(rec.last4)
  local open = redis.call('ZSCORE', stream .. ':h', member)
  if open then
    redis.call('HINCRBY', ckey, 'held', -(rel + keep))
    if held - rel - keep <= 0 then
      holdForget(stream, member)
    else
      redis.call('HSET', stream .. ':ha', member, fmt(held - rel - keep))
    end
  end
  if rel > 0 then
    local kept = {}
    for _, e in ipairs(rec.limitEntries or {}) do
      local m = windowRemove(e[1], e[2], held - rel, rec.reference)
      if m then table.insert(kept, {e[1], m}) end
    end
    rec.limitEntries = kept
    local keptDaily = {}
    for _, e in ipairs(rec.controlEntries or {}) do
      giveBackDaily(e[1], rel)
      if held - rel > 0 then table.insert(keptDaily, {e[1], fmt(held - rel)}) end
    end
    rec.controlEntries = keptDaily
  end
  rec.held = fmt(held - rel - keep)
  rec.released = fmt(tonumber(rec.released) + rel)
  -- settled whole: what it posted stays counted in the windows (as an approval's entry does) until they pass it
  if held - rel - keep <= 0 then rec.limitEntries, rec.controlEntries = {}, {} end
  redis.call('SET', dkey, encodeRecord(rec, dkey), 'KEEPTTL')
  return open
end
`

/**
 * One posting of a statement, once per platformId (docs/operations/settlement.md, the outcomes table).
 * KEYS[1] customer hash  KEYS[2] decision record of (urn, reference)  KEYS[3] the bucket's stream
 * KEYS[4] the posting's record '<tag>:p:<platformId>'
 * ARGV[1] platformId  ARGV[2] type  ARGV[3] reference  ARGV[4] urn  ARGV[5] last4 or ''  ARGV[6] amount
 * ARGV[7] statement id  ARGV[8] postedAt  ARGV[9] backlog bound of the stream  ARGV[10] how long a posting's
 * record is kept, s  ARGV[11] the posting's fingerprint  ARGV[12] the bucket number
 * ARGV[13] a lifecycle line's verdict (read by the caller): 'matched', 'mismatch' or ''
 * ARGV[14] for a mismatch, what accepting the platform's line moves: signed amount (+ credit) ARGV[15] its detail
 * Returns {status 'OK'|'REPLAY'|'CONFLICT', outcome, statement id, exception ids JSON, available or ''}
 */
export const POSTING_DEFINITIONS = COMMON + RECORDS + LIMITS + SETTLEMENT
export const POSTING_BODY = `
callStart()
local prior = redis.call('GET', KEYS[4])
local pid, ptype, ref, urn, last4 = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local stream, backlog = KEYS[3], ARGV[9]
local tag = tagOf(stream)
local now = storeNowMs()
local exceptions = {}
local outcome = nil
local function except (kind, suffix, xamount, accept, acceptAmount, detail)
  local id = 'b' .. ARGV[12] .. '~' .. pid .. suffix
  local key = tag .. ':x:' .. id
  if redis.call('EXISTS', key) == 1 then return end
  local x = { id = id, kind = kind, status = 'open', urn = urn, reference = ref, last4 = last4, platformId = pid,
    statementId = ARGV[7], postingType = ptype, outcome = outcome, amount = fmt(xamount),
    accept = { action = accept, amount = fmt(acceptAmount) }, detail = detail or '', createdAtMs = now }
  redis.call('SET', key, cjson.encode(x))
  redis.call('ZADD', stream .. ':xo', now, id)
  redis.call('ZADD', stream .. ':xa', now, id)
  emit(stream, backlog, 'reconciliation.exception', urn, x)
  table.insert(exceptions, id)
end
if prior then
  local p = cjson.decode(prior)
  if p.f == ARGV[11] then return {'REPLAY', p.o, p.s, cjson.encode(p.x), ''} end
  -- the platformId applied before with other content: not applied; queued for an operator, once per statement
  outcome = p.o
  except('platform_id_conflict', '~c~' .. ARGV[7], amount(ARGV[6], true), 'none', 0,
    'platformId applied by statement ' .. p.s .. ' (' .. p.o .. ') with other content; this line is not applied')
  return {'CONFLICT', p.o, p.s, cjson.encode({ 'b' .. ARGV[12] .. '~' .. pid .. '~c~' .. ARGV[7] }), ''}
end
local amt = amount(ARGV[6], true)
local exists = redis.call('EXISTS', KEYS[1]) == 1
local delta = 0
if not exists then
  outcome = 'unmatched'
  except('unmatched', '', amt, 'none', 0, 'no customer ' .. urn)
elseif ptype == 'purchase' then
  local raw = redis.call('GET', KEYS[2])
  if not raw then
    outcome = 'force_post'
    delta = -amt
    except('force_post', '', amt, 'none', 0, 'no authorization')
  else
    local rec = decodeRecord(raw, KEYS[2], urn, ref, recordLast4(raw))
    if rec.code ~= '00' then
      outcome = 'declined_here'
      delta = -amt
      except('declined_here', '', amt, 'none', 0, 'answered ' .. rec.code)
    else
      local tail = tailOf(KEYS[2])
      local st = readState(tag, tail)
      local cleared = tonumber(st.cl or '0') + amt
      if st.ex then
        outcome = 'late_clearing'
        delta = -amt
        except('late_clearing', '', amt, 'none', 0, 'hold expired')
      else
        local held = tonumber(rec.held)
        local take = amt
        if take > held then take = held end
        -- the rest of the hold is released; what the clearing posts beyond it is debited
        local rest = held - take
        delta = rest - (amt - take)
        settleRecord(rec, KEYS[2], KEYS[1], stream, rest, take)
        local debit = tonumber(rec.debit)
        if cleared < debit then outcome = 'cleared_partial' elseif cleared > debit then outcome = 'cleared_over' else outcome = 'cleared' end
      end
      st.cl = fmt(cleared)
      writeState(tag, tail, KEYS[2], st)
    end
  end
elseif ptype == 'reversal' then
  outcome = 'reversal'
  local raw = redis.call('GET', KEYS[2])
  -- what the authorization still holds is released; beyond it, money back only for what was posted (a
  -- reversal of an expired or never posted authorization has nothing more to give back)
  local rel, credit = 0, amt
  if raw then
    local rec = decodeRecord(raw, KEYS[2], urn, ref, recordLast4(raw))
    if rec.code == '00' then
      rel = tonumber(rec.held)
      if rel > amt then rel = amt end
      if rel > 0 then settleRecord(rec, KEYS[2], KEYS[1], stream, rel, 0) end
      credit = 0
      if tonumber(readState(tag, tailOf(KEYS[2])).cl or '0') > 0 then credit = amt - rel end
    end
  end
  delta = rel + credit
elseif ptype == 'refund' or ptype == 'adjustment' then
  outcome = ptype
  delta = amt
elseif ptype == 'fee' then
  outcome = 'fee'
  delta = -amt
elseif ARGV[13] == 'matched' then
  outcome = 'lifecycle_matched'
else
  outcome = 'lifecycle_mismatch'
  local d = tonumber(ARGV[14])
  local action, accAmt = 'none', 0
  if d > 0 then action, accAmt = 'credit', d elseif d < 0 then action, accAmt = 'debit', -d end
  except('lifecycle_mismatch', '', amt, action, accAmt, ARGV[15])
end
local available = nil
if exists then
  if delta ~= 0 then available = redis.call('HINCRBY', KEYS[1], 'available', delta)
  else available = tonumber(redis.call('HGET', KEYS[1], 'available') or '0') end
  if available < 0 then except('negative_balance', '~nb', -available, 'none', 0, 'available below zero after ' .. outcome) end
end
redis.call('SET', KEYS[4], cjson.encode({ f = ARGV[11], o = outcome, s = ARGV[7], x = exceptions }), 'EX', ARGV[10])
local availText = ''
if available then availText = fmt(available) end
emit(stream, backlog, 'settlement.posted', urn, {
  platformId = pid, statementId = ARGV[7], postingType = ptype, outcome = outcome, reference = ref, amount = ARGV[6],
  postedAt = ARGV[8], available = availText, held = redis.call('HGET', KEYS[1], 'held') or '0'
})
return {'OK', outcome, ARGV[7], cjson.encode(exceptions), availText}
`
export const POSTING_LUA = POSTING_DEFINITIONS + POSTING_BODY

/**
 * An approval of a complete statement's period that no statement posted (final mode): an exception of kind
 * approved_not_posted, once, whose accept releases what it still debits. A hold (holds mode) is left to
 * expiry; an approval released, reversed or cleared is not one.
 * KEYS[1] the decision  KEYS[2] the bucket's stream
 * ARGV[1] urn  ARGV[2] reference  ARGV[3] statement id  ARGV[4] bucket number  ARGV[5] backlog bound
 * Returns the exception's id, or '' when there is none to open
 */
export const NOT_POSTED_LUA = COMMON + RECORDS + SETTLEMENT + `
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
`

/**
 * Expires a bucket's holds due at ARGV[1]: each taken off the index and released in this one step, so that
 * any number of instances may run it at once and each hold expires once.
 * KEYS[1] the bucket's stream  ARGV[1] as of, epoch ms  ARGV[2] how many at most  ARGV[3] backlog bound
 * Returns {expired, more '0'|'1'}
 */
export const EXPIRE_LUA = COMMON + RECORDS + LIMITS + SETTLEMENT + `
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
    -- the decision under the member's key may be another one than the member's (holdForget in the store's
    -- scripts): an approval of the same card, decided when the member's was (a member written before keeps no time)
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
`

/**
 * Marks an exception resolved, once: the same action again is a replay, another one a conflict.
 * KEYS[1] the exception  KEYS[2] the bucket's stream  ARGV[1] resolution JSON {action, amount, reason, keyId}
 * ARGV[2] backlog bound  ARGV[3] audit context JSON or ''  ARGV[4] how long audit records are kept, s
 * Returns {'OK'|'REPLAY', exception JSON} or {rejection code}
 */
export const RESOLVE_LUA = COMMON + AUDIT + `
local auditing = auditOf(ARGV[3], ARGV[4])
local raw = redis.call('GET', KEYS[1])
if not raw then return {'EXCEPTION_NOT_FOUND'} end
local x = cjson.decode(raw)
local r = cjson.decode(ARGV[1])
if x.status == 'resolved' then
  if x.resolution.action == r.action and x.resolution.amount == r.amount then return {'REPLAY', raw} end
  return {'ALREADY_RESOLVED'}
end
r.atMs = storeNowMs()
local before = { status = x.status }
x.status = 'resolved'
x.resolution = r
local out = cjson.encode(x)
redis.call('SET', KEYS[1], out)
redis.call('ZREM', KEYS[2] .. ':xo', x.id)
emit(KEYS[2], ARGV[2], 'reconciliation.resolved', x.urn, x)
audit(KEYS[2], ARGV[2], auditing, x.urn, before, { status = 'resolved', action = r.action, amount = r.amount })
return {'OK', out}
`
