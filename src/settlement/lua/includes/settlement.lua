--[[
  Helpers of the settlement scripts (docs/operations/settlement.md). Each runs on one bucket's slot. Needs
  the store's common.lua and records.lua (and limits.lua for settleRecord).

  Keys of a bucket (tag '<prefix>{b<n>}', stream '<tag>:s'), besides the store's (src/store/keys.ts):
    '<stream>:h'     the open holds, member '<decision key tail>:<last4>' scored by expiry (written by authorize)
    '<tag>:ds:<tail>' a decision's settlement: JSON {cl: cleared amount, ex: expired at ms}; kept as the decision
    '<tag>:p:<platformId>' a posting applied: JSON {f: fingerprint, o: outcome, s: statement, x: exception ids}
    '<tag>:x:<id>'   an exception (JSON); '<stream>:xo' the open ones, '<stream>:xa' all, scored by creation
]]

local function unpart (v) return (string.gsub(string.gsub(v, '%%3A', ':'), '%%25', '%%')) end
-- the last four digits a record was decided for (format 2 keeps them first in its rest)
local function recordLast4 (raw)
  if string.sub(raw, 1, 1) == '{' then return cjson.decode(raw).last4 end
  local nl = string.find(raw, '\n', 1, true)
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
