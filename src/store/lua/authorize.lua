--[[
  The one atomic step of a transaction: idempotency, customer and card state, the stateless rules' decline,
  limits, funds, and the commit (debit, limit entries, decision record, stream entry). All or nothing.
  A replay hands the decision to the replaying attempt (see abandon.lua). The body is
  includes/authorize-body.lua, apart from the helpers for the function library (src/store/functions.ts).

  KEYS[1] customer hash (status, customerId, available)
  KEYS[2] cards hash (last4 -> status)
  KEYS[3] decision record of (urn, reference) (format: src/store/record-format.ts)
  KEYS[4] the bucket's decision stream
  KEYS[5..4+n] one limit window (sorted set) per limit in ARGV, same order
  ARGV[1] reference            ARGV[2] urn                 ARGV[3] last4
  ARGV[4] debit amount         ARGV[5] fingerprint         ARGV[6] attempt id
  ARGV[7] arrival epoch ms (app clock; the score of window entries)
  ARGV[8] deadline epoch ms: past it on the store's clock nothing is committed
  ARGV[9] decision TTL s (covers the limits' windows)     ARGV[10] backlog bound of the stream (EVENTS_BACKLOG_MAX per bucket)
  ARGV[11] stateless decline '<code>|<rule id>' or ''; 'standin': the replay of a stand-in approval (src/standin/), committed
    as 00 whatever the customer's state, controls, limits and balance (which may go below zero), without the deadline
  ARGV[12] the record's rest (the request's side, packed by recordRest), stored as it is; '': the record is
    written in format 1 instead (DECISION_RECORD_FORMAT=json)
  ARGV[13] meta JSON, for format 1 only ('' with a rest): the record's meta and the decision.created event's extra
    data as it is. With a rest, the event's extra data is the rest (src/store/outbox-entry.ts reads both)
  ARGV[14] n, the number of limits     ARGV[15] ms a card control's daily total is kept
  ARGV[16] the record head's attempt, fingerprint and arrival, JSON (headOwnPart)
  ARGV[17] the record head's limit entries if approved, JSON (limitTails)   ARGV[18] its daily totals if counted (dailyTails)
  ARGV[19] the decision.created event's reference, last4, debit and arrivedAtMs, JSON object members (eventOwnPart)
  ARGV[20] holds mode (src/settlement/): the hold's expiry, epoch ms; '': a 00 is final (SETTLEMENT_MODE=final)
  ARGV[21 .. 20+n] limit i: '<mode>|<measure>|<windowStartMs>|<retainMs>|<max>|<code>|<rule id>'
  Card controls (docs/api/card-controls.md), after the limits; with none nothing is checked or counted:
  KEYS[5+n] the card's own controls (hash `kind|field`)   KEYS[5+n+j] control j's daily total of the local day
  KEYS[last] (after the controls' keys, or the limits' with none) the bucket's reference-index hash of the
    reference (refIndexOf in src/store/keys.ts): the script need not sum the reference's bytes for it
  ARGV[21+n ..] control j: '<kind>|<default enabled 1|0>|<default perTransactionMax or empty>|<default dailyMax or empty>'
  Returns {code, reason, ruleId, replayed '0'|'1', available or '', {shadow limit rule ids}, control hit JSON or ''}
]]
--- @include "includes/common"
--- @include "includes/records"
--- @include "includes/limits"
--- @include "includes/authorize-body"
