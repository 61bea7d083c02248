// The reason word beside a decision's response code (docs/api/external-auth.md, "Order of checks").
/** Why a decision came out as it did. Stable: it is logged, stored and counted in metrics. */
export type DecisionReason =
  | 'approved'
  | 'unknown_urn'
  | 'customer_blocked'
  | 'customer_closed'
  | 'card_lost'
  | 'card_stolen'
  | 'card_blocked'
  | 'card_unknown'
  | 'rule'
  | 'limit'
  | 'insufficient_funds'
  | 'conflict'
  | 'deadline'
  /** a card control is off for this kind of use (05) */
  | 'control_off'
  /** a card control's perTransactionMax or dailyMax would be passed (61) */
  | 'control_limit'
