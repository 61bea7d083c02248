// A stored decision record as everyone outside the store sees it: the journal entry (src/domain/journal.ts),
// the one shape of a decision in every admin answer (by reference, by customer and reference, the search), the
// export and the backtest. The store's encodings (its keys, `controlsSeen`'s one-letter fields, numbers kept
// as strings, the fingerprint and attempt) stop here.
import type { JournalEntry } from '../domain/journal.js'
import type { DecisionRecord } from './types.js'

export interface DecisionEntry extends JournalEntry {
  /** what the store had decided before the deadline guard answered 05 */
  decidedCode?: string | null
  /** the part of the hold given back by a reversal or a deadline release */
  released?: number
  /** when an admin reversal gave part or all of the hold back (ISO 8601) */
  reversedAt?: string
  /** decided in stand-in while the store was unreachable, and replayed into it */
  standIn?: true
}

const iso = (ms: number | null | undefined): string | null => (typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : null)
const limitOf = (v: string): number | null => (v === '' ? null : Number(v))

export function decisionEntryOf (rec: DecisionRecord): DecisionEntry {
  const meta = rec.meta
  const request = meta?.request ?? (meta !== null
    ? { urn: rec.urn, transactionReferenceNumber: rec.reference, last4Digits: rec.last4, transactionAmount: meta.transactionAmount, currencyCode: meta.currencyCode, channel: meta.channel }
    : { urn: rec.urn, transactionReferenceNumber: rec.reference, last4Digits: rec.last4 })
  const c = rec.control
  const controls = rec.controlsSeen != null
    ? Object.fromEntries(Object.entries(rec.controlsSeen).map(([kind, s]) => [kind, { enabled: s.e === '1', perTransactionMax: limitOf(s.p), dailyMax: limitOf(s.d) }]))
    : null
  return {
    v: 1,
    urn: rec.urn,
    reference: rec.reference,
    last4: rec.last4,
    request,
    arrivedAt: iso(rec.arrivedAtMs) ?? new Date(0).toISOString(),
    decidedAt: iso(rec.decidedAtMs),
    code: rec.code,
    reason: rec.reason,
    ruleId: rec.ruleId,
    control: c === null ? null : { kind: c.control, check: c.check, limit: c.limit ?? null, totalBefore: c.totalBefore ?? null, debit: c.debit },
    limit: rec.limitSeen != null ? { ruleId: rec.limitSeen.ruleId, usedBefore: Number(rec.limitSeen.usedBefore), max: Number(rec.limitSeen.max) } : null,
    availableSeen: rec.availableSeen != null ? Number(rec.availableSeen) : null,
    debit: Number(rec.debit),
    shadowHits: [...(meta?.shadowHits ?? []).map((h) => h.ruleId), ...rec.shadowLimitHits],
    rulesVersion: meta?.rulesVersion ?? '',
    controls,
    customerStatus: rec.customerStatus ?? null,
    cardStatus: rec.cardStatus ?? null,
    answeredOnDeadline: rec.answeredOnDeadline,
    ...(rec.decidedCode !== null ? { decidedCode: rec.decidedCode } : {}),
    ...(Number(rec.released) > 0 ? { released: Number(rec.released) } : {}),
    ...(rec.reversal !== null ? { reversedAt: iso(rec.reversal.atMs) ?? new Date(0).toISOString() } : {}),
    ...(meta?.standIn === true ? { standIn: true } : {})
  }
}
