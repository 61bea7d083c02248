--[[
  One posting of a statement, once per platformId (docs/operations/settlement.md, the outcomes table). The
  body is includes/posting-body.lua, apart from the helpers for the function library.

  KEYS[1] customer hash  KEYS[2] decision record of (urn, reference)  KEYS[3] the bucket's stream
  KEYS[4] the posting's record '<tag>:p:<platformId>'
  ARGV[1] platformId  ARGV[2] type  ARGV[3] reference  ARGV[4] urn  ARGV[5] last4 or ''  ARGV[6] amount
  ARGV[7] statement id  ARGV[8] postedAt  ARGV[9] backlog bound of the stream  ARGV[10] how long a posting's
  record is kept, s  ARGV[11] the posting's fingerprint  ARGV[12] the bucket number
  ARGV[13] a lifecycle line's verdict (read by the caller): 'matched', 'mismatch' or ''
  ARGV[14] for a mismatch, what accepting the platform's line moves: signed amount (+ credit) ARGV[15] its detail
  ARGV[16] the owner's line of a FAILED record left to an operator: its lifecycle_failed exception's id, or ''
  ARGV[17] what that record holds here  ARGV[18] the line's side for the cardholder: '1' in, '-1' out
  Returns {status 'OK'|'REPLAY'|'CONFLICT', outcome, statement id, exception ids JSON, available or ''}
]]
--- @include "../../store/lua/includes/common"
--- @include "../../store/lua/includes/records"
--- @include "../../store/lua/includes/limits"
--- @include "includes/settlement"
--- @include "includes/posting-body"
