// Lua scripts of the Redis store, registered once with defineCommand. Each runs atomically on the one slot
// of a customer's bucket (every KEYS[i] carries the same hash tag). Amounts are integer strings; Lua numbers
// are doubles, exact to 2^53, which the callers never exceed (see MAX_BALANCE).
//
// Numbers go back to strings with string.format('%d'): tostring() would give "1e+15".
import { DAILY_TAIL, LIMIT_TAIL, RECORD_FORMAT, RECORD_HEAD, RECORD_HEAD_KEPT } from './record-format.js'

export const COMMON = `
local function fmt (n) return string.format('%d', n) end
-- Gives an amount back to a card control's daily total; a total back at zero is removed, so a released
-- approval leaves no trace. A total already expired (the day is over) stays gone.
local function giveBackDaily (key, released)
  local cur = tonumber(redis.call('GET', key) or '0')
  if cur <= 0 then return end
  local left = cur - released
  if left <= 0 then redis.call('DEL', key) else redis.call('SET', key, fmt(left), 'KEEPTTL') end
end
-- A programmer error, never an operating one: the caller asserted the same before sending.
local function amount (s, zeroOk)
  local n = tonumber(s)
  if type(s) ~= 'string' or not string.match(s, '^%d+$') or not n or n > 9007199254740991 or (n == 0 and not zeroOk) then
    error('EXTAUTH_ASSERT amount must be a safe positive integer, got ' .. tostring(s))
  end
  return n
end
-- The outbox: an event goes to the bucket's stream in the same script as the change it reports, so there is
-- no change without its event and no event without its change. Delivered entries are trimmed by the relay;
-- past the backlog bound the oldest are dropped here, and counted in a key of the same bucket (same slot).
-- Fields: t type, u urn, d the script's data (JSON), x the caller's data (JSON, optional; a decision's is the
-- record's rest, see src/store/outbox-entry.ts).
-- data: a table, or its JSON already put together.
local function emit (stream, backlogMax, etype, urn, data, extra)
  if type(data) ~= 'string' then data = cjson.encode(data) end
  if extra and extra ~= '' then
    redis.call('XADD', stream, '*', 't', etype, 'u', urn, 'd', data, 'x', extra)
  else
    redis.call('XADD', stream, '*', 't', etype, 'u', urn, 'd', data)
  end
  local max = tonumber(backlogMax)
  if max and max > 0 and redis.call('XLEN', stream) > max then
    local dropped = redis.call('XTRIM', stream, 'MAXLEN', max)
    if dropped > 0 then redis.call('INCRBY', stream .. ':dropped', dropped) end
  end
end
-- The deadline's 05 recorded before anything was decided (the abandon script's tombstone): nothing held,
-- nothing counted (deadlineRecord in src/store/record.ts is the memory store's). The authorize script writes
-- a decision's record from parts, in the same format (see RECORDS).
local function deadlineRecord (urn, reference, last4, attempt, fingerprint, arrivedAtMs, deadlineAtMs, decidedAtMs)
  return {
    urn = urn, reference = reference, last4 = last4, attempt = attempt, fingerprint = fingerprint,
    code = '05', reason = 'deadline', ruleId = cjson.null, debit = '0', held = '0', released = '0',
    shadowLimitHits = {}, limitEntries = {}, arrivedAtMs = arrivedAtMs, deadlineAtMs = deadlineAtMs, decidedAtMs = decidedAtMs,
    answeredOnDeadline = true, decidedCode = cjson.null, reversal = cjson.null, meta = cjson.null
  }
end
-- The decision.created event's data: what the record says, and the available balance the script saw
-- (createdEventOf in src/store/record.ts; the authorize script puts the same fields together from parts).
local function createdEvent (rec, available)
  return {
    reference = rec.reference, last4 = rec.last4, code = rec.code, reason = rec.reason, ruleId = rec.ruleId,
    control = rec.control or cjson.null, debit = rec.debit, held = rec.held, available = available,
    shadowLimitHits = rec.shadowLimitHits, decidedCode = rec.decidedCode or cjson.null,
    answeredOnDeadline = rec.answeredOnDeadline, arrivedAtMs = rec.arrivedAtMs, decidedAtMs = rec.decidedAtMs
  }
end
-- The bucket's reference index: 16 hashes '<stream>:r:<shard>' of reference -> the urns (escaped, joined by
-- ':') with a decision of that reference in the bucket; the shard is a sum over the reference's bytes (refShard
-- in keys.ts). Lookup by reference alone reads one field per bucket. Same slot as the stream.
local function refIndex (stream, member, add)
  local sep = string.find(member, ':', 1, true)
  local urn, ref = string.sub(member, 1, sep - 1), string.sub(member, sep + 1)
  local h = 0
  for i = 1, #ref do h = (h * 31 + string.byte(ref, i)) % 65521 end
  local key = stream .. ':r:' .. fmt(h % 16)
  if add then
    -- one call in the usual case: the reference is new in the bucket
    if redis.call('HSETNX', key, ref, urn) == 1 then return end
    local cur = redis.call('HGET', key, ref)
    for u in string.gmatch(cur, '[^:]+') do if u == urn then return end end
    redis.call('HSET', key, ref, cur .. ':' .. urn)
    return
  end
  local cur = redis.call('HGET', key, ref)
  if cur then
    local left = {}
    for u in string.gmatch(cur, '[^:]+') do if u ~= urn then table.insert(left, u) end end
    if #left == 0 then redis.call('HDEL', key, ref) else redis.call('HSET', key, ref, table.concat(left, ':')) end
  end
end
-- The journal's time index of the bucket: member '<urn>:<reference>' (the decision key's tail), scored by
-- arrival, and the reference index, both written with the decision. An entry leaves both once its decision is
-- gone (expired): of the entries older than the retention, the oldest few are checked on the way, and a
-- decision still kept (a longer ttl, for a limit's window) stops the trim until it expires. So an index never
-- lacks a stored decision, and never holds one long after it expired. A key derived from the stream's, same slot.
local function journal (stream, member, arrivedMs, keepS)
  local key = stream .. ':j'
  local decisions = string.sub(stream, 1, -2) .. 'd:'
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. fmt(arrivedMs - tonumber(keepS) * 1000), 'LIMIT', 0, 8)) do
    if old ~= member and redis.call('EXISTS', decisions .. old) == 1 then break end
    redis.call('ZREM', key, old)
    refIndex(stream, old, false)
  end
  redis.call('ZADD', key, arrivedMs, member)
  refIndex(stream, member, true)
end
local function storeNowMs ()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

export const RECORDS = `
-- Decision records (the format is src/store/record-format.ts): format 1, a JSON object, read and written back
-- as such; format 2, '<head>\\n<rest>', the head a JSON array of HEAD's fields after the format number, the rest
-- the request's side, written by the caller and kept as it is. Decoded, both are one table of named fields
-- (format 2's table keeps its rest, so that writing it back keeps the format). Of format 2, the caller gives
-- the urn, reference and last4 (the key names the first two); a limit entry's member and a daily total's amount
-- follow from what is held; an entry's key is its tail with the record key's tag and the customer's scope.
local HEAD = {${RECORD_HEAD.map((f) => `'${f}'`).join(', ')}}
local LIMITS_AT, DAILY_AT, DECIDED_AT, ON_DEADLINE_AT = ${['limitEntries', 'controlEntries', 'decidedAtMs', 'answeredOnDeadline'].map((f) => RECORD_HEAD.indexOf(f as typeof RECORD_HEAD[number]) + 2).join(', ')}
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
  local nl = string.find(raw, '\\n', 1, true)
  local h = cjson.decode(string.sub(raw, 1, nl - 1))
  if h[1] ~= ${RECORD_FORMAT} then error('EXTAUTH_ASSERT unknown decision record format ' .. tostring(h[1])) end
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
    entries[i] = {tag .. '${LIMIT_TAIL}' .. t .. ':' .. scope, rec.held .. '|' .. reference}
  end
  for i, t in ipairs(rec.controlEntries or {}) do controls[i] = {tag .. '${DAILY_TAIL}' .. card .. ':' .. t, rec.held} end
  rec.limitEntries, rec.controlEntries = entries, controls
  return rec
end
local function encodeRecord (rec, key)
  if not rec.rest then return cjson.encode(rec) end
  local h = {${RECORD_FORMAT}}
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
    local t = string.match(string.sub(e[1], #tag + ${LIMIT_TAIL.length + 1}), '^[^:]*:[^:]*')
    local scope = cust
    if string.sub(t, -5) == ':card' then scope = card end
    if tag .. '${LIMIT_TAIL}' .. t .. ':' .. scope ~= e[1] then error('EXTAUTH_ASSERT limit entry ' .. e[1] .. ' is not of record ' .. key) end
    limits[i] = t
  end
  for i, e in ipairs(rec.controlEntries or {}) do
    local head = tag .. '${DAILY_TAIL}' .. card .. ':'
    if string.sub(e[1], 1, #head) ~= head then error('EXTAUTH_ASSERT daily total ' .. e[1] .. ' is not of record ' .. key) end
    daily[i] = string.sub(e[1], #head + 1)
  end
  h[LIMITS_AT], h[DAILY_AT] = limits, daily
  -- trailing fields null or empty are left out
  while #h > ${RECORD_HEAD_KEPT} and (h[#h] == cjson.null or (type(h[#h]) == 'table' and next(h[#h]) == nil)) do h[#h] = nil end
  return cjson.encode(h) .. '\\n' .. rec.rest
end
`

/**
 * A limit window's running totals, so a decision costs the same whatever the window holds. Next to each
 * window (sorted set of '<amount>|<reference>' scored by time) a hash '<window>:t' holds, for every slice of
 * 1 min, 15 min, 1 h, 6 h, 1 day and 7 days (UTC, epoch-aligned) with an amount in the window, the sum of its
 * entries (fields 'm<n>', 'q<n>', 'h<n>', 's<n>', 'd<n>', 'w<n>', n = floor(score / slice length)) and 'c' the
 * amount of all. Field 'v' marks totals that hold every entry of the set ('r', a cursor: those scored before
 * it, while a window stored before the totals is summed into them); every add, removal and trim of an entry
 * goes through these functions, which keep it so. The amount from a start on = 'c' when the window holds
 * nothing older (a rolling window), else the start's partial minute entry by entry (only if its minute holds
 * entries) and at each level the whole slices up to the next level's boundary, added, or down to the previous
 * one, taken off (at the last level: to the latest entry, or to the oldest and taken off 'c'), whichever reads
 * fewer: at most half a minute's entries and 7 + 2 + 3 + 2 + 3 fields besides half the weeks spanned, whatever
 * the window holds (docs/development/money.md, Limit totals). The set stays the record of each entry: its time
 * for a reversal, and the count limits (ZCOUNT, already logarithmic).
 */
export const LIMITS = `
-- slice lengths, each dividing the next: 1 min, 15 min, 1 h, 6 h, 1 day, 7 days (epoch-aligned); PER[i] is
-- how many slices of level i make one of level i + 1
local NAMES = { 'm', 'q', 'h', 's', 'd', 'w' }
local LENS = { 60000, 900000, 3600000, 21600000, 86400000, 604800000 }
local PER = { 15, 4, 6, 4, 7 }
local function memberAmount (member) return tonumber(string.match(member, '^(%d+)|')) end
-- Adds an entry's amount to the fields of its slices and to 'c', in a table of field -> amount.
-- The six slice fields of a score; the last score's are kept for this call of the script (a decision adds
-- one score to every window it commits to).
local namesScore, namesOfScore = nil, nil
local function sliceNames (score)
  if score ~= namesScore then
    namesOfScore = {}
    for i = 1, 6 do namesOfScore[i] = NAMES[i] .. fmt(math.floor(score / LENS[i])) end
    namesScore = score
  end
  return namesOfScore
end
local function sliceInto (by, score, amt)
  if amt == 0 then return end
  local names = sliceNames(score)
  for i = 1, 6 do
    local f = names[i]
    by[f] = (by[f] or 0) + amt
  end
  by.c = (by.c or 0) + amt
end
-- Applies such a table to the totals (sign -1 takes it off); a field left at zero or below goes.
local function applySlices (tkey, by, sign)
  for f, amt in pairs(by) do
    if amt ~= 0 and redis.call('HINCRBY', tkey, f, fmt(sign * amt)) <= 0 then redis.call('HDEL', tkey, f) end
  end
end
local function addSlices (tkey, score, amt)
  local by = {}
  sliceInto(by, score, amt)
  applySlices(tkey, by, 1)
end
-- How far the totals go: entries scored below the returned score are in them (all when 'v' is set; those
-- before the cursor 'r' while a window stored before the totals is being summed into them; none without either).
local function coveredBelow (tkey)
  local st = redis.call('HMGET', tkey, 'v', 'r')
  if st[1] == '1' then return math.huge end
  if st[2] then return tonumber(st[2]) end
  return -math.huge
end
-- What totalsReady left coveredBelow at, per totals key, in this call of the script: a check's commit reads it
-- from here (only totalsReady changes 'v' and 'r' of a window being committed to).
local covered = {}
local function coveredNow (tkey)
  local below = covered[tkey]
  if below == nil then below = coveredBelow(tkey) end
  return below
end
-- Entries a check or rebuild sums into the totals at most, per decision: a window stored before the totals
-- is summed into them over several decisions (each still checked by the plain sum meanwhile).
local REBUILD_MAX = 1000
-- Before a check and commit: true when the totals hold all the window's entries. A new window starts with
-- complete totals (kept no longer than its retention if nothing is committed); a window stored without them
-- (before they were kept) is summed into them up to REBUILD_MAX entries further, oldest first, and the
-- caller sums it entry by entry until that is done; totals found without their window are dropped.
local ttlSeen = {}
local function totalsReady (key, retainMs)
  local tkey = key .. ':t'
  local ttl = redis.call('PTTL', key)
  ttlSeen[key] = ttl
  if ttl == -2 then
    redis.call('DEL', tkey)
    redis.call('HSET', tkey, 'v', '1')
    redis.call('PEXPIRE', tkey, retainMs)
    covered[tkey] = math.huge
    return true
  end
  local below = coveredBelow(tkey)
  covered[tkey] = below
  if below == math.huge then return true end
  if below == -math.huge then redis.call('DEL', tkey) end
  local from = '-inf'
  if below ~= -math.huge then from = fmt(below) end
  local chunk = redis.call('ZRANGEBYSCORE', key, from, '+inf', 'WITHSCORES', 'LIMIT', 0, REBUILD_MAX)
  local done = #chunk < 2 * REBUILD_MAX
  local cursor = nil
  if not done then
    -- up to the last score taken, exclusive, so entries of one score are summed together
    cursor = tonumber(chunk[#chunk])
    if tonumber(chunk[2]) == cursor then
      chunk = redis.call('ZRANGEBYSCORE', key, fmt(cursor), fmt(cursor), 'WITHSCORES')
      cursor = cursor + 1
    end
  end
  local by = {}
  for i = 1, #chunk, 2 do
    local score = tonumber(chunk[i + 1])
    if done or score < cursor then sliceInto(by, score, memberAmount(chunk[i])) end
  end
  applySlices(tkey, by, 1)
  if done then
    redis.call('HSET', tkey, 'v', '1')
    redis.call('HDEL', tkey, 'r')
    covered[tkey] = math.huge
  else
    redis.call('HSET', tkey, 'r', fmt(cursor))
    covered[tkey] = tonumber(fmt(cursor))
  end
  if ttl > 0 then redis.call('PEXPIRE', tkey, ttl) end
  return done
end
-- The amount of the window's entries scored startMs or later (after totalsReady): field 'c' is the amount of
-- all of them, so it is read alone when the whole window counts (a rolling window: its retention is its
-- length). Else few fields give it exactly (limit-totals.ts, windowPlan, the same plan): the start's partial
-- minute entry by entry, taken off down from its own minute or added up to the next, whichever part is
-- shorter; then at each level the whole slices up to the next level's boundary (added) or down to the
-- previous one (taken off), whichever reads fewer fields; at the last level up to the latest entry, or 'c'
-- less those down to the oldest. Slices outside the entries' span hold nothing and are not read: at most
-- 7 + 2 + 3 + 2 + 3 fields, half the weeks spanned, the start's minute, and half a minute's entries (none
-- when its total shows it holds none). Planned in one pass with plain arithmetic: this runs for every amount
-- limit that starts inside its window's history.
local function windowAmount (key, startMs)
  local bottom = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if #bottom == 0 then return 0 end
  local first = tonumber(bottom[2])
  local tkey = key .. ':t'
  if first >= startMs then return tonumber(redis.call('HGET', tkey, 'c') or '0') end
  local last = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
  if last < startMs then return 0 end
  -- k: everything from slice k of the current level on is still to be summed; the start's partial minute p is
  -- taken off down from its start (k = p) or added up to the next minute (k = p + 1), read only if the
  -- minute's total shows entries in it (read with the fields: at is its place)
  local M = LENS[1]
  local part = startMs % M
  local p = (startMs - part) / M
  local k = p
  if part >= M / 2 then k = p + 1 end
  -- fields[i] read with sign[i]; comparisons written out (math.max and math.min are calls)
  local fields, sign, n, at = {}, {}, 0, nil
  local format = string.format
  for i = 1, 6 do
    local len, name = LENS[i], NAMES[i]
    local lo, hi = (first - first % len) / len, (last - last % len) / len
    -- up: slices k .. up - 1 to the next boundary (the last level: to the latest entry's); down: from the
    -- previous boundary (the last level: the oldest entry's) to k - 1, taken off what follows, 'c' at the end
    local up, down
    if i < 6 then
      down = k - k % PER[i]
      up = down + PER[i]
      if down == k then up = k end
    else
      down, up = lo, hi + 1
    end
    -- within the entries' span: a .. b up, c .. d down; nu, nd one less than their number of slices
    local a, b, c, d = k, up - 1, down, k - 1
    if a < lo then a = lo end
    if b > hi then b = hi end
    if c < lo then c = lo end
    if d > hi then d = hi end
    local nu, nd = b - a, d - c
    if nu < -1 then nu = -1 end
    if nd < -1 then nd = -1 end
    local s = 1
    if nu <= nd then
      k = up
    else
      a, b, s, k = c, d, -1, down
    end
    for x = a, b do
      n = n + 1
      fields[n], sign[n] = format('%s%d', name, x), s
      if i == 1 and x == p then at = n end
    end
    if i == 6 and s == -1 then n = n + 1; fields[n], sign[n] = 'c', 1 end
    if i < 6 then k = k / PER[i] end
  end
  if part > 0 and not at then n = n + 1; fields[n], sign[n], at = format('m%d', p), 0, n end
  local sum, busy = 0, false
  local i = 1
  while i <= n do
    local j = i + 199
    if j > n then j = n end
    local got = redis.call('HMGET', tkey, unpack(fields, i, j))
    for x = i, j do
      local v = got[x - i + 1]
      if v then
        sum = sum + sign[x] * tonumber(v)
        if x == at then busy = true end
      end
    end
    i = j + 1
  end
  if busy then
    if part < M / 2 then
      for _, e in ipairs(redis.call('ZRANGEBYSCORE', key, fmt(p * M), '(' .. fmt(startMs))) do sum = sum - memberAmount(e) end
    else
      for _, e in ipairs(redis.call('ZRANGEBYSCORE', key, fmt(startMs), '(' .. fmt(p * M + M))) do sum = sum + memberAmount(e) end
    end
  end
  return sum
end
local function windowAdd (key, score, member)
  redis.call('ZADD', key, score, member)
  local tkey = key .. ':t'
  if score < coveredNow(tkey) then addSlices(tkey, score, memberAmount(member)) end
end
-- Removes an entry; with keepAmount > 0 puts it back for that amount at its own time (a part reversal), so the
-- slices adjusted are those of the original transaction. Totals are adjusted only for an entry they hold
-- (coveredBelow: a window stored before them is summed into them later). Returns the member put back, or nil.
local function windowRemove (key, member, keepAmount, reference)
  local score = redis.call('ZSCORE', key, member)
  if not score then return nil end
  redis.call('ZREM', key, member)
  local back = nil
  if keepAmount > 0 then
    back = fmt(keepAmount) .. '|' .. reference
    redis.call('ZADD', key, score, back)
  end
  local tkey = key .. ':t'
  -- the last entry gone: so are its totals
  covered[tkey] = nil
  if not back and redis.call('EXISTS', key) == 0 then redis.call('DEL', tkey)
  elseif tonumber(score) < coveredBelow(tkey) then addSlices(tkey, tonumber(score), keepAmount - memberAmount(member)) end
  return back
end
-- Drops entries scored before cutMs, a bounded number per call: they can no longer fall in the window (its
-- retention is at least its length); a backlog left by a burst goes over the next commits, or with the key.
local TRIM_MAX = 64
local function windowTrim (key, cutMs)
  local old = redis.call('ZRANGEBYSCORE', key, '-inf', '(' .. fmt(cutMs), 'WITHSCORES', 'LIMIT', 0, TRIM_MAX)
  if #old == 0 then return end
  local tkey = key .. ':t'
  local below = coveredNow(tkey)
  local by, members = {}, {}
  for i = 1, #old, 2 do
    table.insert(members, old[i])
    -- the totals hold only the entries scored below what they cover
    local score = tonumber(old[i + 1])
    if score < below then sliceInto(by, score, memberAmount(old[i])) end
  end
  redis.call('ZREM', key, unpack(members))
  applySlices(tkey, by, -1)
end
-- The window and its totals expire together, no earlier than retainMs from now. The ttl totalsReady saw is
-- no lower than the one now (a key's ttl only falls; one without a ttl, or new since, has none): when it is
-- already below retainMs, so is the one now, and it need not be read again. Once set it is read again.
local function windowExpire (key, retainMs)
  local ttl = ttlSeen[key]
  ttlSeen[key] = nil
  if not ttl or ttl >= retainMs then ttl = redis.call('PTTL', key) end
  if ttl < retainMs then
    redis.call('PEXPIRE', key, retainMs)
    ttl = retainMs
  end
  redis.call('PEXPIRE', key .. ':t', ttl)
end
-- The state above that is one call's: covered, ttlSeen, the last score's slice names. A script's text runs
-- anew on every call; a function's definitions run once, when its library is loaded, and would keep it
-- from one decision to the next (growing with every window checked): the function's body starts here.
local function callStart ()
  covered, ttlSeen, namesScore, namesOfScore = {}, {}, nil, nil
end
`

/**
 * The audit trail of the admin listener's changes, written in the same script as the change (so there is no
 * change without its record). `ctx` is the route's JSON (id, keyId, route, scope, requestId, target), or ''
 * for a change not made through an admin route (the card lifecycle's money moves, audited by their caller).
 * The record goes to the bucket's audit index, a sorted set scored by the store's clock under a key derived
 * from the stream's (same slot), records past the retention dropped on the way; and to the outbox as an
 * `audit.recorded` event. before/after hold states only (balances, statuses, settings), never card data.
 */
export const AUDIT = `
local function writeAudit (stream, backlogMax, rec, keepS, urn)
  local now = storeNowMs()
  local keepMs = tonumber(keepS) * 1000
  rec.atMs = now
  local key = stream .. ':a'
  redis.call('ZADD', key, now, cjson.encode(rec))
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. fmt(now - keepMs))
  redis.call('PEXPIRE', key, keepMs)
  emit(stream, backlogMax, 'audit.recorded', urn, rec)
  return now
end
-- Read at the top of a script, before it writes anything: a script that fails after a write is not undone,
-- and its caller would be told nothing was done. nil: no context, nothing to audit.
local function auditOf (ctx, keepS)
  if not ctx or ctx == '' then return nil end
  local ok, rec = pcall(cjson.decode, ctx)
  local keep = tonumber(keepS)
  if not ok or type(rec) ~= 'table' or not keep or keep <= 0 then
    error('EXTAUTH_ASSERT audit context must be a JSON object and its retention a positive number of seconds')
  end
  return { rec = rec, keepS = keep }
end
local function audit (stream, backlogMax, auditing, urn, before, after)
  if not auditing then return end
  local rec = auditing.rec
  rec.outcome = 'done'
  rec.before = before or cjson.null
  rec.after = after or cjson.null
  writeAudit(stream, backlogMax, rec, auditing.keepS, urn)
end
-- a hash's HGETALL pairs as a table
local function pairsOf (flat)
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end
`

/**
 * One audit record written alone: a change that is not one store script (a rule reload, a card-lifecycle
 * call, an event sent again) or a call refused for a missing scope, written right after (or instead of) it.
 * KEYS[1] the bucket's stream   ARGV[1] backlog bound of the stream   ARGV[2] record JSON (context, outcome,
 * before, after)   ARGV[3] how long records are kept, s   ARGV[4] urn or ''
 * Returns the store's clock (ms) the record carries
 */
export const AUDIT_LUA = COMMON + AUDIT + `
return writeAudit(KEYS[1], ARGV[1], cjson.decode(ARGV[2]), ARGV[3], ARGV[4])
`

/**
 * The one atomic step of a transaction: idempotency, customer and card state, the stateless rules' decline,
 * limits, funds, and the commit (debit, limit entries, decision record, stream entry). All or nothing.
 * A replay hands the decision to the replaying attempt (see abandon).
 *
 * KEYS[1] customer hash (status, customerId, available)
 * KEYS[2] cards hash (last4 -> status)
 * KEYS[3] decision record of (urn, reference) (format: src/store/record-format.ts)
 * KEYS[4] the bucket's decision stream
 * KEYS[5..4+n] one limit window (sorted set) per limit in ARGV, same order
 * ARGV[1] reference            ARGV[2] urn                 ARGV[3] last4
 * ARGV[4] debit amount         ARGV[5] fingerprint         ARGV[6] attempt id
 * ARGV[7] arrival epoch ms (app clock; the score of window entries)
 * ARGV[8] deadline epoch ms: past it on the store's clock nothing is committed
 * ARGV[9] decision TTL s (covers the limits' windows)     ARGV[10] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
 * ARGV[11] stateless decline '<code>|<rule id>' or ''; 'standin': the replay of a stand-in approval (src/standin/), committed
 *   as 00 whatever the customer's state, controls, limits and balance (which may go below zero), without the deadline
 * ARGV[12] the record's rest (the request's side, packed by recordRest), stored as it is; '': the record is
 *   written in format 1 instead (DECISION_RECORD_FORMAT=json)
 * ARGV[13] meta JSON, for format 1 only ('' with a rest): the record's meta and the decision.created event's extra
 *   data as it is. With a rest, the event's extra data is the rest (src/store/outbox-entry.ts reads both)
 * ARGV[14] n, the number of limits     ARGV[15] ms a card control's daily total is kept
 * ARGV[16] the record head's attempt, fingerprint and arrival, JSON (headOwnPart)
 * ARGV[17] the record head's limit entries if approved, JSON (limitTails)   ARGV[18] its daily totals if counted (dailyTails)
 * ARGV[19] the decision.created event's reference, last4, debit and arrivedAtMs, JSON object members (eventOwnPart)
 * ARGV[20] holds mode (src/settlement/): the hold's expiry, epoch ms; '': a 00 is final (SETTLEMENT_MODE=final)
 * ARGV[21 .. 20+n] limit i: '<mode>|<measure>|<windowStartMs>|<retainMs>|<max>|<code>|<rule id>'
 * Card controls (docs/api/card-controls.md), after the limits; with none nothing is checked or counted:
 * KEYS[5+n] the card's own controls (hash `kind|field`)   KEYS[5+n+j] control j's daily total of the local day
 * ARGV[21+n ..] control j: '<kind>|<default enabled 1|0>|<default perTransactionMax or empty>|<default dailyMax or empty>'
 * Returns {code, reason, ruleId, replayed '0'|'1', available or '', {shadow limit rule ids}, control hit JSON or ''}
 */
/**
 * The authorize script's definitions (the helpers above), apart from its body so that the same code also
 * runs as a Redis function (AUTHORIZE_LIBRARY in functions.ts): a function library defines them once when it
 * is loaded, a script on every call.
 */
export const AUTHORIZE_DEFINITIONS = COMMON + RECORDS + LIMITS
export const AUTHORIZE_BODY = `
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
  local fields = {}
  local defaults = {}
  for j = 1, m do
    local d = { string.match(ARGV[cb + j], '^([^|]+)|([01])|(%d*)|(%d*)$') }
    if not d[4] then error('EXTAUTH_ASSERT control ' .. j .. ' is not packed as kind|enabled|per|daily') end
    defaults[j] = d
    local kind = d[1]
    table.insert(fields, kind .. '|enabled')
    table.insert(fields, kind .. '|perTransactionMax')
    table.insert(fields, kind .. '|dailyMax')
  end
  local own = redis.call('HMGET', KEYS[ck], unpack(fields))
  for j = 1, m do
    local d = defaults[j]
    local function pick (i)
      local v = own[(j - 1) * 3 + i]
      if v then return v end
      return d[i + 1]
    end
    ctl[j] = { kind = d[1], enabled = pick(1), per = pick(2), daily = pick(3) }
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
    local complete = totalsReady(key, tonumber(retainMs))
    if measure == 'count' then
      used = redis.call('ZCOUNT', key, startMs, '+inf') + 1
    elseif complete then
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
local holdMember = string.match(KEYS[3], '}:d:(.*)$') .. ':' .. keyPart(ARGV[3])
local staleAmt = tonumber(redis.call('HGET', KEYS[4] .. ':ha', holdMember) or '0')
if redis.call('ZSCORE', KEYS[4] .. ':h', holdMember) then
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
  if debit > 0 then available = redis.call('HINCRBY', KEYS[1], 'available', -debit) end
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
    local retain = tonumber(limitAt(i)[4])
    windowAdd(key, nowMs, member)
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
local seenControls = 'null'
if #ctl > 0 then
  local parts = {}
  for j = 1, #ctl do
    local c = ctl[j]
    parts[j] = c.kind .. '|' .. c.enabled .. '|' .. c.per .. '|' .. c.daily
  end
  seenControls = cjson.encode(table.concat(parts, ';'))
end
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
local head = '[' .. ${RECORD_FORMAT} .. ',"' .. code .. '","' .. reason .. '","' .. ARGV[4] .. '","' .. fmt(held) .. '","0",' .. onDeadlineFlag .. ',' ..
  ARGV[16] .. ',' .. fmt(storeNow - nowMs) .. ',' .. seenControls .. ',' .. str(seen.customerStatus) .. ',' .. str(seen.cardStatus) .. ',' ..
  limitTails .. ',' .. dailyTails
if last > 0 then head = head .. ',' .. table.concat(late, ',', 1, last) end
local record = head .. ']\\n' .. ARGV[12]
if ARGV[12] == '' then
  -- format 1, which every earlier version reads (DECISION_RECORD_FORMAT=json, for a rolling upgrade)
  local rec = deadlineRecord(ARGV[2], ARGV[1], ARGV[3], ARGV[6], ARGV[5], nowMs, deadline, storeNow)
  rec.code, rec.reason, rec.ruleId, rec.debit, rec.held = code, reason, rid, ARGV[4], fmt(held)
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
journal(KEYS[4], string.match(KEYS[3], '}:d:(.*)$'), nowMs, ARGV[9])
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
  ',"control":' .. str(controlHit) .. ',"held":"' .. fmt(held) .. '","available":' .. availJson .. ',"shadowLimitHits":' .. late[1] ..
  ',"decidedCode":' .. str(decidedCode) .. ',"answeredOnDeadline":' .. onDeadlineJson .. ',"decidedAtMs":' .. fmt(storeNow) .. '}', extra)
local hitJson = ''
if controlHit then hitJson = cjson.encode(controlHit) end
return {code, reason, ruleId, '0', avail, shadowHits, hitJson}
`
export const AUTHORIZE_LUA = AUTHORIZE_DEFINITIONS + AUTHORIZE_BODY

/**
 * Deadline compensation for one request attempt. Safe in either order with the attempt's authorize:
 * run first, it leaves a tombstone the authorize then replays (05, nothing held); run after, it releases
 * what that attempt's decision held and turns it into a 05.
 *
 * KEYS[1] customer hash  KEYS[2] decision record  KEYS[3] decision stream  KEYS[4..] the attempt's limit windows,
 * then the daily totals of its card controls
 * ARGV[1] reference  ARGV[2] urn  ARGV[3] attempt id  ARGV[4] fingerprint  ARGV[5] last4
 * ARGV[6] arrival epoch ms  ARGV[7] deadline epoch ms  ARGV[8] decision TTL s  ARGV[9] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
 * ARGV[10] '0': release only, no tombstone when there is no decision (the attempt never reached the store)
 * ARGV[11] the tombstone's rest (the request's side, packed by recordRest, without meta); '': format 1
 * Returns 'tombstoned' | 'released' | 'untouched'
 */
export const ABANDON_LUA = COMMON + RECORDS + LIMITS + `
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
`

/**
 * Release an approved hold, whole or part, once. A full release removes the transaction from its limit
 * windows; a part release lowers the amount it counts for.
 *
 * KEYS[1] customer hash  KEYS[2] decision record  KEYS[3] decision stream  KEYS[4..] the decision's limit windows,
 * then the daily totals of its card controls (a release gives its amount back to them)
 * ARGV[1] amount to release, '' for all that is held   ARGV[2] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
 * ARGV[3] audit context JSON or '' (see AUDIT)   ARGV[4] how long audit records are kept, s
 * ARGV[5] urn  ARGV[6] reference  ARGV[7] last4 (of the record: a compact one leaves them out)
 * Returns {'OK', replayed '0'|'1', released, available} or {rejection code}
 */
export const REVERSE_LUA = COMMON + RECORDS + LIMITS + AUDIT + `
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
local available = redis.call('HINCRBY', KEYS[1], 'available', amt)
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
`

/**
 * Credit or debit, idempotent on the reference; a debit never takes the balance below zero and a credit
 * never takes it past maxBalance. A 'note' moves no money: it records, once per reference, that an operation
 * whose money already moved has completed, and writes that event (an unload's completion).
 *
 * KEYS[1] customer hash  KEYS[2] the operation's record (its amount)  KEYS[3] decision stream
 * ARGV[1] 'credit' | 'debit' | 'note'  ARGV[2] amount ('0' for a note)  ARGV[3] reference  ARGV[4] urn  ARGV[5] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
 * ARGV[6] max balance  ARGV[7] how long the reference is kept, s (the decision retention)
 * ARGV[8] event type, '' for funds.credited / funds.debited (a note names its own)   ARGV[9] the event's details (JSON) or ''
 * ARGV[10] audit context JSON or '' (see AUDIT)   ARGV[11] how long audit records are kept, s
 * Returns {'OK', replayed '0'|'1', available} or {rejection code} ({'INSUFFICIENT_FUNDS', available} for a debit)
 */
export const MONEY_OP_LUA = COMMON + AUDIT + `
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
`

/**
 * Create or update a customer; a new one starts ACTIVE with nothing available.
 * KEYS[1] customer hash  KEYS[2] the bucket's stream
 * ARGV[1] status or ''  ARGV[2] '1' when ARGV[3] carries a customerId  ARGV[3] customerId  ARGV[4] urn
 * ARGV[5] backlog bound of the stream   ARGV[6] audit context JSON or '' (see AUDIT)   ARGV[7] how long audit records are kept, s
 */
export const PUT_CUSTOMER_LUA = COMMON + AUDIT + `
local auditing = auditOf(ARGV[6], ARGV[7])
local was = redis.call('HMGET', KEYS[1], 'status', 'customerId', 'available')
local created = redis.call('HSETNX', KEYS[1], 'available', '0') == 1
redis.call('HSETNX', KEYS[1], 'status', 'ACTIVE')
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[1]) end
if ARGV[2] == '1' then redis.call('HSET', KEYS[1], 'customerId', ARGV[3]) end
local c = redis.call('HMGET', KEYS[1], 'status', 'customerId', 'available')
emit(KEYS[2], ARGV[5], 'customer.updated', ARGV[4], { created = created, status = c[1], customerId = c[2] or cjson.null, available = c[3] })
local before = nil
if not created then before = { status = was[1], customerId = was[2] or cjson.null, available = was[3] } end
audit(KEYS[2], ARGV[5], auditing, ARGV[4], before, { status = c[1], customerId = c[2] or cjson.null, available = c[3] })
return 'OK'
`

/**
 * Register or update a card of an existing customer.
 * KEYS[1] customer hash  KEYS[2] cards hash  KEYS[3] the bucket's stream
 * ARGV[1] last4  ARGV[2] status  ARGV[3] urn  ARGV[4] backlog bound of the stream
 * ARGV[5] audit context JSON or '' (see AUDIT)   ARGV[6] how long audit records are kept, s
 */
export const PUT_CARD_LUA = COMMON + AUDIT + `
local auditing = auditOf(ARGV[5], ARGV[6])
if redis.call('EXISTS', KEYS[1]) == 0 then return 'CUSTOMER_NOT_FOUND' end
local previous = redis.call('HGET', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
emit(KEYS[3], ARGV[4], 'card.updated', ARGV[3], { last4 = ARGV[1], status = ARGV[2], previous = previous or cjson.null })
local before = nil
if previous then before = { status = previous } end
audit(KEYS[3], ARGV[4], auditing, ARGV[3], before, { status = ARGV[2] })
return 'OK'
`

/**
 * Release a lifecycle lock only if the caller still owns it (compare and delete in one step).
 * KEYS[1] lock key  ARGV[1] owner token
 */
export const UNLOCK_LIFECYCLE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

/**
 * Restart a lifecycle lock's ttl only if the caller still owns it.
 * KEYS[1] lock key  ARGV[1] owner token  ARGV[2] ttl ms
 */
export const RENEW_LIFECYCLE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`

/**
 * Write a lifecycle record only if the stored one is at the expected revision (its JSON field \`rev\`; 0
 * when absent or without one), so a call that outlived its lock cannot overwrite a newer call's record.
 * KEYS[1] record key  ARGV[1] new JSON  ARGV[2] expected revision  ARGV[3] ttl seconds, or 0: kept without
 * expiry (a record not final yet; the write clears any ttl the record had)
 * Returns 1 when written, 0 when the stored revision differs
 */
export const PUT_LIFECYCLE_CAS_LUA = `
local cur = redis.call('GET', KEYS[1])
local rev = 0
if cur then
  local ok, rec = pcall(cjson.decode, cur)
  if ok and type(rec) == 'table' and type(rec.rev) == 'number' then rev = rec.rev end
end
if rev ~= tonumber(ARGV[2]) then return 0 end
if tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
return 1
`

/**
 * Read, and with field/value pairs also change, the card's own controls. Returns the settings before and
 * after, so the change can be reported with both. A card must be registered to carry controls.
 * KEYS[1] customer hash  KEYS[2] cards hash  KEYS[3] the card's own controls (hash `kind|field`)  KEYS[4] the bucket's stream
 * ARGV[1] last4  ARGV[2] urn  ARGV[3] backlog bound of the stream
 * ARGV[4] audit context JSON or '' (see AUDIT)   ARGV[5] how long audit records are kept, s
 * ARGV[6..] field, value pairs to set ('1'|'0' for enabled; digits, or '' for no limit)
 * Returns {'OK', {before field, value, ...}, {after field, value, ...}} or {rejection code}
 */
export const CARD_CONTROLS_LUA = COMMON + AUDIT + `
local auditing = auditOf(ARGV[4], ARGV[5])
if redis.call('EXISTS', KEYS[1]) == 0 then return {'CUSTOMER_NOT_FOUND'} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return {'CARD_NOT_FOUND'} end
local before = redis.call('HGETALL', KEYS[3])
if #ARGV < 7 then return {'OK', before, before} end
redis.call('HSET', KEYS[3], unpack(ARGV, 6))
local after = redis.call('HGETALL', KEYS[3])
emit(KEYS[4], ARGV[3], 'card.controls.updated', ARGV[2], { last4 = ARGV[1], before = before, after = after })
audit(KEYS[4], ARGV[3], auditing, ARGV[2], pairsOf(before), pairsOf(after))
return {'OK', before, after}
`

/**
 * Lookup by reference alone on a single Redis (a Cluster cannot run one script over many slots; there the
 * reader sends one HGET per bucket): one field of every bucket's reference index in one step.
 * KEYS[1..n] the reference-index hash of each bucket (the one of the reference's shard)  ARGV[1] the reference, escaped
 * Returns {i, urns, ...}: the position in KEYS of each hash holding the reference, and its value
 */
export const REF_LOOKUP_LUA = `
local out = {}
for i = 1, #KEYS do
  local v = redis.call('HGET', KEYS[i], ARGV[1])
  if v then
    table.insert(out, i - 1)
    table.insert(out, v)
  end
end
return out
`

/**
 * Puts decisions stored before the reference index existed into it (\`extauth decisions reindex\`): for each
 * time-index member whose decision is still kept, its reference entry (added once, as \`journal\` does).
 * KEYS[1] the bucket's stream (the indexes' keys derive from it, same slot)
 * ARGV[1..] time-index members '<urn>:<reference>'
 * Returns how many were still kept
 */
export const REINDEX_LUA = COMMON + `
local decisions = string.sub(KEYS[1], 1, -2) .. 'd:'
local kept = 0
for i = 1, #ARGV do
  if redis.call('EXISTS', decisions .. ARGV[i]) == 1 then
    refIndex(KEYS[1], ARGV[i], true)
    kept = kept + 1
  end
end
return kept
`
