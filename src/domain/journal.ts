// src/domain/journal.ts: one decision as the journal keeps it (contract §9). Imports nothing of ours.
export interface JournalEntry {
  /** 1 */
  v: 1
  urn: string
  reference: string
  last4: string
  /** the request's fields as received (strings as sent; no secrets exist in it: last four digits only) */
  request: Record<string, string>
  /** ISO 8601 */
  arrivedAt: string
  decidedAt: string | null
  /** the answer's code and the reason word (approved, rule, limit, control_off, control_limit, insufficient_funds, card_lost, …, deadline, conflict) */
  code: string
  reason: string
  /** the deciding rule, if a rule or a limit rule declined */
  ruleId: string | null
  /** the deciding control, if a card control declined */
  control: { kind: string, check: 'enabled' | 'perTransactionMax' | 'dailyMax', limit: number | null, totalBefore: number | null, debit: number } | null
  /** for a limit decline: the window's use before this transaction and its max */
  limit: { ruleId: string, usedBefore: number, max: number } | null
  /** for 51: the available balance the store saw; otherwise null */
  availableSeen: number | null
  /** the debit amount asked for (integer minor units) */
  debit: number
  shadowHits: string[]
  rulesVersion: string
  /** the card controls that applied to this transaction as they stood (the effective settings of the kinds
   *  that applied: channel kind and, if cross-border, international), so a replay can rebuild daily totals */
  controls: Record<string, { enabled: boolean, perTransactionMax: number | null, dailyMax: number | null }> | null
  /** customer and card status as the store saw them (for "as recorded" replays) */
  customerStatus: string | null
  cardStatus: string | null
  /** answered 05 by the deadline guard after the store had decided `decidedCode` */
  answeredOnDeadline: boolean
}

export interface JournalSource {
  /** entries with arrivedAt in [fromMs, toMs), oldest first, streamed (constant memory) */
  read (fromMs: number, toMs: number): AsyncIterable<JournalEntry>
}
