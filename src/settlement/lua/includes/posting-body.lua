--[[
  The posting script's body: its KEYS, ARGV and reply are in posting.lua. Kept apart from the helpers it runs
  with so that the same code also runs as a Redis function (POSTING_LIBRARY in src/settlement/functions.ts),
  as the authorize step does: a statement's million postings would otherwise define every helper again on
  each call.
]]

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
  -- a line that names a card matches only a decision of that card: the reference on another card is no
  -- authorization of this one
  local otherCard = nil
  if raw and last4 ~= '' then
    local l4 = recordLast4(raw)
    if l4 ~= last4 then otherCard = l4 end
  end
  if not raw or otherCard then
    outcome = 'force_post'
    delta = -amt
    local detail = 'no authorization'
    if otherCard then detail = 'no authorization of card ' .. last4 .. ' (the reference was authorized on card ' .. otherCard .. ')' end
    except('force_post', '', amt, 'none', 0, detail)
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
  if raw and (last4 == '' or recordLast4(raw) == last4) then
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
elseif ARGV[16] ~= '' then
  -- the line settles a FAILED record: it is weighed against what the record holds here, less what a resolution
  -- of the record's exception gave back (plus what one took), as movedForFailed in memory-settlement.ts
  local sign = tonumber(ARGV[18])
  local moved = tonumber(ARGV[17])
  local lfkey = tag .. ':x:' .. ARGV[16]
  local lfraw = redis.call('GET', lfkey)
  local lf = nil
  if lfraw then lf = cjson.decode(lfraw) end
  if lf and lf.resolution then
    local ra = tonumber(lf.resolution.amount) or 0
    if lf.resolution.action == 'release' or lf.resolution.action == 'credit' then moved = moved + sign * ra
    elseif lf.resolution.action == 'debit' then moved = moved - sign * ra end
  end
  local d = amt - moved
  local differenceId = nil
  if d == 0 then
    outcome = 'lifecycle_matched'
  else
    outcome = 'lifecycle_mismatch'
    local action = 'debit'
    if d * sign > 0 then action = 'credit' end
    local abs = d
    if abs < 0 then abs = -abs end
    except('lifecycle_mismatch', '', amt, action, abs, ARGV[15])
    differenceId = 'b' .. ARGV[12] .. '~' .. pid
  end
  if lf and lf.status == 'open' then
    local reason = 'settled by statement ' .. ARGV[7] .. ', platformId ' .. pid
    if differenceId then reason = reason .. '; the difference is exception ' .. differenceId end
    lf.status = 'resolved'
    lf.resolution = { action = 'accept', amount = '0', reason = reason, keyId = '', atMs = now }
    redis.call('SET', lfkey, cjson.encode(lf))
    redis.call('ZREM', stream .. ':xo', lf.id)
    emit(stream, backlog, 'reconciliation.resolved', lf.urn, lf)
  end
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
