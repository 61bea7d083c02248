--[[
  The authorize script's body: its KEYS, ARGV and reply are in authorize.lua. Kept apart from the helpers it
  runs with (common.lua, records.lua, limits.lua) so that the same code also runs as a Redis function
  (AUTHORIZE_LIBRARY in src/store/functions.ts): a function library defines the helpers once, when it is
  loaded, and its function runs only this body; a script sent with EVALSHA runs them all on every call.

  The head's leading 2 is RECORD_FORMAT of src/store/record-format.ts (see records.lua). The comments below
  go to Redis with the code and name the parts as they were named in TypeScript: RECORDS is
  includes/records.lua, EXPIRE_LUA the settlement's src/settlement/lua/expire.lua.
]]

callStart()
local existing = redis.call('GET', KEYS[3])
if existing then
  local rec = decodeRecord(existing, KEYS[3], ARGV[2], ARGV[1], ARGV[3])
  if rec.fingerprint ~= ARGV[5] then
    return {'05', 'conflict', '', '0', '', {}}
  end
  -- The platform acts on the answer to its latest attempt: a later attempt answering with the stored
  -- decision owns it (an earlier attempt's deadline compensation must not undo what it answers, and its own
  -- compensation must). An earlier attempt arriving here late takes nothing over.
  if rec.attempt ~= ARGV[6] and rec.answeredOnDeadline ~= true and tonumber(ARGV[7]) >= tonumber(rec.attemptArrivedAtMs or rec.arrivedAtMs) then
    rec.attempt = ARGV[6]
    rec.attemptArrivedAtMs = tonumber(ARGV[7])
    redis.call('SET', KEYS[3], encodeRecord(rec, KEYS[3]), 'KEEPTTL')
  end
  local rid = rec.ruleId
  if type(rid) ~= 'string' then rid = '' end
  return {rec.code, rec.reason, rid, '1', '', {}}
end

local debit = amount(ARGV[4], true)
local standIn = ARGV[11] == 'standin'
local nowMs = tonumber(ARGV[7])
local n = tonumber(ARGV[14])
local code, reason, ruleId = '00', 'approved', ''
local available = nil
-- limit i: mode, measure, windowStartMs, retainMs, max, code, ruleId (split when a limit is checked)
local limits = {}
local function limitAt (i)
  local l = limits[i]
  if not l then
    l = { string.match(ARGV[20 + i], '^(%a+)|(%a+)|(%d+)|(%d+)|(%d+)|(%d+)|(.+)$') }
    if not l[7] then error('EXTAUTH_ASSERT limit ' .. i .. ' is not packed as mode|measure|start|retain|max|code|rule') end
    limits[i] = l
  end
  return l
end

-- Card controls. The card's own settings are read here, in the atomic step: a change made between the
-- request's arrival and this commit is the one applied. Every off control first, then the limits.
local cb = 20 + n
local ck = 5 + n
local m = #ARGV - cb
local controlHit = nil
-- what the decision saw, for the journal (docs/api/admin.md, Finding a decision); amounts as strings
local seen = { customerStatus = cjson.null, cardStatus = cjson.null, availableSeen = cjson.null, limitSeen = cjson.null }
-- the effective settings of the controls that applied, once read
local ctl = {}
local function checkControls ()
  -- the card's own settings, fields '<kind>|<setting>': most cards have none, and then only the defaults apply
  local raw = redis.call('HGETALL', KEYS[ck])
  local own = nil
  if #raw > 0 then
    own = {}
    for i = 1, #raw, 2 do own[raw[i]] = raw[i + 1] end
  end
  for j = 1, m do
    local packed = ARGV[cb + j]
    local kind, enabled, per, daily = string.match(packed, '^([^|]+)|([01])|(%d*)|(%d*)$')
    if not daily then error('EXTAUTH_ASSERT control ' .. j .. ' is not packed as kind|enabled|per|daily') end
    if own then
      enabled = own[kind .. '|enabled'] or enabled
      per = own[kind .. '|perTransactionMax'] or per
      daily = own[kind .. '|dailyMax'] or daily
      packed = kind .. '|' .. enabled .. '|' .. per .. '|' .. daily
    end
    -- packed: the effective settings as the record keeps them (the default's argument when the card has none)
    ctl[j] = { kind = kind, enabled = enabled, per = per, daily = daily, packed = packed }
  end
  for j = 1, m do
    if ctl[j].enabled ~= '1' then
      controlHit = { control = ctl[j].kind, check = 'enabled', debit = ARGV[4] }
      return '05', 'control_off'
    end
  end
  for j = 1, m do
    local c = ctl[j]
    if c.per ~= '' and debit > tonumber(c.per) then
      controlHit = { control = c.kind, check = 'perTransactionMax', limit = c.per, debit = ARGV[4] }
      return '61', 'control_limit'
    end
    if c.daily ~= '' then
      local before = tonumber(redis.call('GET', KEYS[ck + j]) or '0')
      if before + debit > tonumber(c.daily) then
        controlHit = { control = c.kind, check = 'dailyMax', limit = c.daily, totalBefore = fmt(before), debit = ARGV[4] }
        return '61', 'control_limit'
      end
    end
  end
  return '00', 'approved'
end

local cust = redis.call('HMGET', KEYS[1], 'status', 'available')
if standIn then
  -- answered 00 while the store could not be asked: what it holds now is recorded, not checked; an unknown
  -- customer has nothing to debit (available stays nil: nothing is held or counted)
  if cust[1] then
    available = tonumber(cust[2]) or 0
    seen.customerStatus = cust[1]
    local card = redis.call('HGET', KEYS[2], ARGV[3])
    if card then seen.cardStatus = card end
  end
elseif not cust[1] then
  code, reason = '14', 'unknown_urn'
else
  available = tonumber(cust[2]) or 0
  seen.customerStatus = cust[1]
  if cust[1] == 'BLOCKED' then code, reason = '05', 'customer_blocked'
  elseif cust[1] == 'CLOSED' then code, reason = '05', 'customer_closed'
  else
    local card = redis.call('HGET', KEYS[2], ARGV[3])
    if card then seen.cardStatus = card end
    if card == 'LOST' then code, reason = '41', 'card_lost'
    elseif card == 'STOLEN' then code, reason = '43', 'card_stolen'
    elseif card == 'BLOCKED' then code, reason = '05', 'card_blocked'
    elseif (not card) and redis.call('HLEN', KEYS[2]) > 0 then code, reason = '14', 'card_unknown'
    else
      if m > 0 then code, reason = checkControls() end
      if code == '00' and ARGV[11] ~= '' then
        local dcode, drule = string.match(ARGV[11], '^(%d+)|(.+)$')
        code, reason, ruleId = dcode, 'rule', drule
      end
    end
  end
end

local shadowHits = {}
if code == '00' then
  for i = 1, n do
    local mode, measure, startMs, retainMs, max, lcode, lrule = unpack(limitAt(i))
    local key = KEYS[4 + i]
    local used
    -- a count is read from the set; an amount from the totals (windowAddCount, totalsReady)
    if measure == 'count' then
      used = redis.call('ZCOUNT', key, startMs, '+inf') + 1
    elseif totalsReady(key, tonumber(retainMs)) then
      used = debit + windowAmount(key, tonumber(startMs))
    else
      -- totals still being summed from a window stored before them: entry by entry, as before them
      used = debit
      for _, e in ipairs(redis.call('ZRANGEBYSCORE', key, startMs, '+inf')) do used = used + memberAmount(e) end
    end
    if used > tonumber(max) and not standIn then
      if mode == 'shadow' then
        table.insert(shadowHits, lrule)
      elseif code == '00' then
        code, reason, ruleId = lcode, 'limit', lrule
        local before = used - debit
        if measure == 'count' then before = used - 1 end
        seen.limitSeen = { ruleId = lrule, usedBefore = fmt(before), max = max }
      end
    end
  end
  if code == '00' and not standIn and debit > available then
    code, reason = '51', 'insufficient_funds'
    seen.availableSeen = fmt(available)
  end
end

local storeNow = storeNowMs()
local deadline = tonumber(ARGV[8])
local onDeadline = storeNow > deadline and not standIn
local decidedCode = cjson.null
if onDeadline then
  decidedCode = code
  code, reason, ruleId = '05', 'deadline', ''
  controlHit = nil
end

-- a hold the index still has for this member is one whose decision is gone (else this were a replay): it is
-- released as expiry releases such a hold (EXPIRE_LUA), before the new decision may take its member
-- the decision key's tail '<urn>:<reference>' (escaped): the journal's member, and its hold's with the card
local tail = string.match(KEYS[3], '}:d:(.*)$')
local holdMember = tail .. ':' .. keyPart(ARGV[3])
if redis.call('ZSCORE', KEYS[4] .. ':h', holdMember) then
  local staleAmt = tonumber(redis.call('HGET', KEYS[4] .. ':ha', holdMember) or '0')
  if staleAmt > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'held', -staleAmt)
    local back = redis.call('HINCRBY', KEYS[1], 'available', staleAmt)
    if available ~= nil then available = back end
    emit(KEYS[4], ARGV[10], 'authorization.expired', ARGV[2], {
      reference = ARGV[1], last4 = ARGV[3], released = fmt(staleAmt), available = fmt(back),
      held = redis.call('HGET', KEYS[1], 'held') or '0'
    })
  end
  holdForget(KEYS[4], holdMember)
end

local held = 0
local counted = false
-- an approval of a known customer (only a stand-in replay approves an unknown one: nothing to hold)
local commit = code == '00' and available ~= nil
if commit then
  -- HINCRBY refuses the -0 of a zero-amount account check
  -- ARGV[4] as sent (the digits of a safe integer, as the record, the limit entries and the daily totals keep it):
  -- a Lua number would be formatted on the way
  if debit > 0 then available = redis.call('HINCRBY', KEYS[1], 'available', '-' .. ARGV[4]) end
  held = debit
  if debit > 0 and ARGV[20] ~= '' then
    -- holds mode: the approval is a hold that clearing posts or expiry releases (src/settlement/)
    redis.call('HINCRBY', KEYS[1], 'held', debit)
    redis.call('ZADD', KEYS[4] .. ':h', ARGV[20], holdMember)
    redis.call('HSET', KEYS[4] .. ':ha', holdMember, ARGV[4], holdMember .. ':d', fmt(storeNow))
  end
  local member = ARGV[4] .. '|' .. ARGV[1]
  for i = 1, n do
    local key = KEYS[4 + i]
    local l = limitAt(i)
    local retain = tonumber(l[4])
    if l[2] == 'count' then windowAddCount(key, nowMs, member) else windowAdd(key, nowMs, member) end
    windowTrim(key, nowMs - retain)
    windowExpire(key, retain)
  end
end
-- a zero-amount account check adds nothing to a daily total
if commit and debit > 0 and m > 0 then
  counted = true
  for j = 1, m do
    local key = KEYS[ck + j]
    -- the amount as sent, digits: how a Lua number is turned into an argument differs between Redis versions
    if redis.call('INCRBY', key, ARGV[4]) == debit then redis.call('PEXPIRE', key, ARGV[15]) end
  end
end

-- The record (format 2, see RECORDS): the head put together from what was decided and the parts the caller
-- encoded (the attempt, fingerprint and arrival; the entries' key tails), then the rest as sent. Codes,
-- reasons and amounts are words and digits; what Redis or a rule gave is encoded.
local function str (v)
  if v == nil or v == cjson.null then return 'null' end
  return cjson.encode(v)
end
-- a string as JSON: words, digits, '|' and ';' need only its quotes (cjson escapes none of them); else encoded
local function plain (v)
  if type(v) == 'string' and string.find(v, '^[%w_|;]*$') then return '"' .. v .. '"' end
  return str(v)
end
local seenControls = 'null'
if #ctl > 0 then
  local parts = {}
  for j = 1, #ctl do parts[j] = ctl[j].packed end
  seenControls = plain(table.concat(parts, ';'))
end
local heldText = fmt(held)
local limitTails, dailyTails = '[]', '[]'
if commit and n > 0 then limitTails = ARGV[17] end
if counted then dailyTails = ARGV[18] end
local onDeadlineFlag = '0'
if onDeadline then onDeadlineFlag = '1' end
local rid = cjson.null
if ruleId ~= '' then rid = ruleId end
-- shadowLimitHits, ruleId, decidedCode, reversal, attemptArrivedAtMs, control, availableSeen, limitSeen: left out
-- from the last one set on
local late = { '[]', str(rid), str(decidedCode), 'null', 'null', str(controlHit), str(seen.availableSeen), str(seen.limitSeen) }
if #shadowHits > 0 then late[1] = cjson.encode(shadowHits) end
local last = #late
while last > 0 and (late[last] == 'null' or late[last] == '[]') do last = last - 1 end
local head = '[2,"' .. code .. '","' .. reason .. '","' .. ARGV[4] .. '","' .. heldText .. '","0",' .. onDeadlineFlag .. ',' ..
  ARGV[16] .. ',' .. fmt(storeNow - nowMs) .. ',' .. seenControls .. ',' .. plain(seen.customerStatus) .. ',' .. plain(seen.cardStatus) .. ',' ..
  limitTails .. ',' .. dailyTails
if last > 0 then head = head .. ',' .. table.concat(late, ',', 1, last) end
local record = head .. ']\n' .. ARGV[12]
if ARGV[12] == '' then
  -- format 1, which every earlier version reads (DECISION_RECORD_FORMAT=json, for a rolling upgrade)
  local rec = deadlineRecord(ARGV[2], ARGV[1], ARGV[3], ARGV[6], ARGV[5], nowMs, deadline, storeNow)
  rec.code, rec.reason, rec.ruleId, rec.debit, rec.held = code, reason, rid, ARGV[4], heldText
  rec.shadowLimitHits, rec.answeredOnDeadline, rec.decidedCode, rec.meta = shadowHits, onDeadline, decidedCode, ARGV[13]
  rec.control = controlHit or cjson.null
  rec.limitEntries, rec.controlEntries = {}, {}
  if commit then
    for i = 1, n do rec.limitEntries[i] = {KEYS[4 + i], ARGV[4] .. '|' .. ARGV[1]} end
  end
  if counted then
    for j = 1, m do rec.controlEntries[j] = {KEYS[ck + j], ARGV[4]} end
  end
  for k, v in pairs(seen) do rec[k] = v end
  rec.controlsSeen = cjson.null
  if #ctl > 0 then
    rec.controlsSeen = {}
    for j = 1, #ctl do rec.controlsSeen[ctl[j].kind] = { e = ctl[j].enabled, p = ctl[j].per, d = ctl[j].daily } end
  end
  record = cjson.encode(rec)
end
local ttlS = ARGV[9]
-- a hold's decision is kept past its expiry by the retention, so that a late clearing finds it (holdTtlMs)
if held > 0 and ARGV[20] ~= '' then ttlS = fmt(tonumber(ARGV[9]) + math.max(0, math.ceil((tonumber(ARGV[20]) - nowMs) / 1000))) end
redis.call('SET', KEYS[3], record, 'EX', ttlS)
journal(KEYS[4], tail, ARGV[7], ARGV[9], KEYS[#KEYS])
local avail = ''
if available then avail = fmt(available) end
-- the decision.created event's data, the same fields as createdEvent's (the caller encoded reference, last4,
-- debit and arrival)
local availJson = 'null'
if available then availJson = '"' .. avail .. '"' end
-- the request's side: the record's rest (packed), or with format 1 the meta JSON
local extra = ARGV[12]
if extra == '' then extra = ARGV[13] end
local onDeadlineJson = 'false'
if onDeadline then onDeadlineJson = 'true' end
emit(KEYS[4], ARGV[10], 'decision.created', ARGV[2], '{' .. ARGV[19] .. ',"code":"' .. code .. '","reason":"' .. reason .. '","ruleId":' .. str(rid) ..
  ',"control":' .. str(controlHit) .. ',"held":"' .. heldText .. '","available":' .. availJson .. ',"shadowLimitHits":' .. late[1] ..
  ',"decidedCode":' .. str(decidedCode) .. ',"answeredOnDeadline":' .. onDeadlineJson .. ',"decidedAtMs":' .. fmt(storeNow) .. '}', extra)
local hitJson = ''
if controlHit then hitJson = cjson.encode(controlHit) end
return {code, reason, ruleId, '0', avail, shadowHits, hitJson}
