--[[
  Decision records: decoded from and encoded to their stored form (src/store/record-format.ts), and the
  open hold a release takes off. Needs common.lua.

  The values written out below are record-format.ts's, which the TypeScript readers use: HEAD is RECORD_HEAD,
  the 2 in the head is RECORD_FORMAT, ':l:' and ':cd:' are LIMIT_TAIL and DAILY_TAIL, the 4 after #tag is
  LIMIT_TAIL's length + 1, the 13 is RECORD_HEAD_KEPT, and the four positions are those of limitEntries,
  controlEntries, decidedAtMs and answeredOnDeadline in RECORD_HEAD + 2. test/store/lua-files.test.ts holds
  them to it.
]]

-- Decision records (the format is src/store/record-format.ts): format 1, a JSON object, read and written back
-- as such; format 2, '<head>\n<rest>', the head a JSON array of HEAD's fields after the format number, the rest
-- the request's side, written by the caller and kept as it is. Decoded, both are one table of named fields
-- (format 2's table keeps its rest, so that writing it back keeps the format). Of format 2, the caller gives
-- the urn, reference and last4 (the key names the first two); a limit entry's member and a daily total's amount
-- follow from what is held; an entry's key is its tail with the record key's tag and the customer's scope.
local HEAD = {'code', 'reason', 'debit', 'held', 'released', 'answeredOnDeadline', 'attempt', 'fingerprint', 'arrivedAtMs', 'decidedAtMs', 'controlsSeen', 'customerStatus', 'cardStatus', 'limitEntries', 'controlEntries', 'shadowLimitHits', 'ruleId', 'decidedCode', 'reversal', 'attemptArrivedAtMs', 'control', 'availableSeen', 'limitSeen'}
local LIMITS_AT, DAILY_AT, DECIDED_AT, ON_DEADLINE_AT = 15, 16, 11, 7
-- a value as one part of a key (part in keys.ts)
local function keyPart (v) return (string.gsub(string.gsub(v, '%%', '%%25'), ':', '%%3A')) end
-- Settlement (src/settlement/): an approval in holds mode is an open hold, a member '<decision key tail>:<last4>'
-- of the bucket's hold index '<stream>:h' scored by its expiry. A release of what it holds (a reversal, a
-- deadline compensation) also takes it off the customer's 'held'; once nothing is left it leaves the index.
-- '<stream>:ha' keeps what each open hold holds, so that expiry releases it even when its decision is gone,
-- and under '<member>:d' (no member has a third ':') the decidedAtMs of the decision whose hold it is: the
-- member's decision key may hold another decision by the time it expires (its own forgotten, the reference
-- decided anew on another card, or a deadline's tombstone), and that one's hold it is not.
local function holdForget (stream, member)
  redis.call('ZREM', stream .. ':h', member)
  redis.call('HDEL', stream .. ':ha', member, member .. ':d')
end
local function holdRelease (stream, dkey, ckey, last4, amt, left)
  local member = string.match(dkey, '}:d:(.*)$') .. ':' .. keyPart(last4)
  if not redis.call('ZSCORE', stream .. ':h', member) then return end
  if amt > 0 then redis.call('HINCRBY', ckey, 'held', -amt) end
  if left <= 0 then
    holdForget(stream, member)
  else
    redis.call('HSET', stream .. ':ha', member, string.format('%d', left))
  end
end
-- the record key's tag, and the scope of the customer's card ('<urn>:<last4>', escaped)
local function recordScope (key, last4)
  local tag, urn = string.match(key, '^(.*}):d:([^:]*):')
  return tag, urn .. ':' .. keyPart(last4)
end
local function decodeRecord (raw, key, urn, reference, last4)
  if string.sub(raw, 1, 1) == '{' then return cjson.decode(raw) end
  local nl = string.find(raw, '\n', 1, true)
  local h = cjson.decode(string.sub(raw, 1, nl - 1))
  if h[1] ~= 2 then error('EXTAUTH_ASSERT unknown decision record format ' .. tostring(h[1])) end
  local rec = { rest = string.sub(raw, nl + 1), urn = urn, reference = reference, last4 = last4 }
  for i, f in ipairs(HEAD) do
    local v = h[i + 1]
    if v ~= cjson.null then rec[f] = v end
  end
  rec.decidedAtMs = rec.arrivedAtMs + rec.decidedAtMs
  rec.answeredOnDeadline = rec.answeredOnDeadline == 1
  local tag, card = recordScope(key, last4)
  local cust = string.match(card, '^[^:]*')
  local entries, controls = {}, {}
  for i, t in ipairs(rec.limitEntries or {}) do
    local scope = cust
    if string.sub(t, -5) == ':card' then scope = card end
    entries[i] = {tag .. ':l:' .. t .. ':' .. scope, rec.held .. '|' .. reference}
  end
  for i, t in ipairs(rec.controlEntries or {}) do controls[i] = {tag .. ':cd:' .. card .. ':' .. t, rec.held} end
  rec.limitEntries, rec.controlEntries = entries, controls
  return rec
end
local function encodeRecord (rec, key)
  if not rec.rest then return cjson.encode(rec) end
  local h = {2}
  for i, f in ipairs(HEAD) do
    local v = rec[f]
    if v == nil then v = cjson.null end
    h[i + 1] = v
  end
  h[DECIDED_AT] = rec.decidedAtMs - rec.arrivedAtMs
  h[ON_DEADLINE_AT] = rec.answeredOnDeadline and 1 or 0
  local tag, card = recordScope(key, rec.last4)
  local cust = string.match(card, '^[^:]*')
  local limits, daily = {}, {}
  for i, e in ipairs(rec.limitEntries or {}) do
    -- '<rule>:<per>:<scope>' after the tag: the scope goes
    local t = string.match(string.sub(e[1], #tag + 4), '^[^:]*:[^:]*')
    local scope = cust
    if string.sub(t, -5) == ':card' then scope = card end
    if tag .. ':l:' .. t .. ':' .. scope ~= e[1] then error('EXTAUTH_ASSERT limit entry ' .. e[1] .. ' is not of record ' .. key) end
    limits[i] = t
  end
  for i, e in ipairs(rec.controlEntries or {}) do
    local head = tag .. ':cd:' .. card .. ':'
    if string.sub(e[1], 1, #head) ~= head then error('EXTAUTH_ASSERT daily total ' .. e[1] .. ' is not of record ' .. key) end
    daily[i] = string.sub(e[1], #head + 1)
  end
  h[LIMITS_AT], h[DAILY_AT] = limits, daily
  -- trailing fields null or empty are left out
  while #h > 12 and (h[#h] == cjson.null or (type(h[#h]) == 'table' and next(h[#h]) == nil)) do h[#h] = nil end
  return cjson.encode(h) .. '\n' .. rec.rest
end
