--[[
  A limit window's running totals, so a decision costs the same whatever the window holds. Needs common.lua.

  Next to each window (sorted set of '<amount>|<reference>' scored by time) a hash '<window>:t' holds, for
  every slice of 1 min, 15 min, 1 h, 6 h, 1 day and 7 days (UTC, epoch-aligned) with an amount in the window,
  the sum of its entries (fields 'm<n>', 'q<n>', 'h<n>', 's<n>', 'd<n>', 'w<n>', n = floor(score / slice
  length)) and 'c' the amount of all. Field 'v' marks totals that hold every entry of the set ('r', a cursor:
  those scored before it, while a window stored before the totals is summed into them); every add, removal
  and trim of an entry goes through these functions, which keep it so. The amount from a start on = 'c' when
  the window holds nothing older (a rolling window), else the start's partial minute entry by entry (only if
  its minute holds entries) and at each level the whole slices up to the next level's boundary, added, or down
  to the previous one, taken off (at the last level: to the latest entry, or to the oldest and taken off 'c'),
  whichever reads fewer: at most half a minute's entries and 7 + 2 + 3 + 2 + 3 fields besides half the weeks
  spanned, whatever the window holds (docs/development/money.md, Limit totals). The set stays the record of
  each entry: its time for a reversal, and the count limits (ZCOUNT, already logarithmic).
]]

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
-- the six names made by one format, then taken apart: NAMES in order (a function library's definitions run
-- where the standard library cannot be reached, so this is written out)
local NAMES_FORMAT = 'm%d q%d h%d s%d d%d w%d'
local function sliceNames (score)
  if score ~= namesScore then
    local f = math.floor
    namesOfScore = { string.match(string.format(NAMES_FORMAT, f(score / LENS[1]), f(score / LENS[2]), f(score / LENS[3]),
      f(score / LENS[4]), f(score / LENS[5]), f(score / LENS[6])), '^(%S+) (%S+) (%S+) (%S+) (%S+) (%S+)$') }
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
-- One entry's amount (negative: taken off) added to its six slices and 'c', as sliceInto and applySlices would,
-- the amount formatted once (HINCRBY each: fewer calls, an HMGET and an HSET, cost more, counted)
local function addSlices (tkey, score, amt)
  if amt == 0 then return end
  local names = sliceNames(score)
  local text = fmt(amt)
  for i = 1, 7 do
    local f = names[i] or 'c'
    if redis.call('HINCRBY', tkey, f, text) <= 0 then redis.call('HDEL', tkey, f) end
  end
end
-- How far the totals go: entries scored below the returned score are in them (all when 'v' is set; those
-- before the cursor 'r' while a window stored before the totals is being summed into them; none without either).
-- With them, 'c' as read (nil when absent).
local function coveredBelow (tkey)
  local st = redis.call('HMGET', tkey, 'v', 'r', 'c')
  if st[1] == '1' then return math.huge, st[3] end
  if st[2] then return tonumber(st[2]), st[3] end
  return -math.huge, st[3]
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
-- 'c' of complete totals as totalsReady read it (false: none), and the window's first score as windowAmount read
-- it (math.huge: empty), per key, in this call of the script
local totalSeen, firstSeen = {}, {}
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
  local below, c = coveredBelow(tkey)
  covered[tkey] = below
  if below == math.huge then
    -- complete, and unchanged until the check reads them: the check's 'c' is this one (windowAmount)
    totalSeen[tkey] = c or false
    return true
  end
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
  if #bottom == 0 then
    firstSeen[key] = math.huge
    return 0
  end
  local first = tonumber(bottom[2])
  firstSeen[key] = first
  local tkey = key .. ':t'
  if first >= startMs then
    local c = totalSeen[tkey]
    if c == nil then c = redis.call('HGET', tkey, 'c') end
    return tonumber(c or '0')
  end
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
-- A count limit's entry. A count is read with ZCOUNT, so its window keeps no totals: any it has (its rule
-- summed amounts before, under the same id) are dropped, to be summed anew from the set (totalsReady) if it
-- ever does again. Covered then reads as none (-huge), so that a trim adjusts nothing and nothing expires them.
local function windowAddCount (key, score, member)
  redis.call('ZADD', key, score, member)
  local tkey = key .. ':t'
  if covered[tkey] ~= -math.huge then
    redis.call('DEL', tkey)
    covered[tkey] = -math.huge
  end
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
  -- nothing before the cut when the window's first entry, as the check read it, is not (the commit's own entry is
  -- at its arrival, after the cut)
  local first = firstSeen[key]
  if first ~= nil and first >= cutMs then return end
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
-- The window and its totals expire together, no earlier than retainMs from now. When it is due, their expiry is
-- set a slack past that (an eighth of the retention, at most an hour), so that the decisions within the slack
-- need not set it again: kept at most that much longer. The ttl totalsReady saw, in this call, is the one now (a
-- window new since had none: -2, and is due); without it the ttl is read. Totals known to be none (a count
-- window's) have nothing to expire.
local function windowExpire (key, retainMs)
  local ttl = ttlSeen[key]
  ttlSeen[key] = nil
  if not ttl then ttl = redis.call('PTTL', key) end
  if ttl < retainMs then
    local keep = retainMs + math.min(math.floor(retainMs / 8), 3600000)
    redis.call('PEXPIRE', key, keep)
    if covered[key .. ':t'] ~= -math.huge then redis.call('PEXPIRE', key .. ':t', keep) end
  end
end
-- The state above that is one call's: covered, ttlSeen, totalSeen, firstSeen, the last score's slice names. A script's text runs
-- anew on every call; a function's definitions run once, when its library is loaded, and would keep it
-- from one decision to the next (growing with every window checked): the function's body starts here.
local function callStart ()
  covered, ttlSeen, namesScore, namesOfScore, totalSeen, firstSeen = {}, {}, nil, nil, {}, {}
end
