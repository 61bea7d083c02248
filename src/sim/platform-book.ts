// The prepaid platform's journal of postings: its books of record, from which it writes the statement of a
// period in extauth-v1 (contract §13: a header line, then one NDJSON line a posting). The wallets post their
// transfers and unloads here; the purchase book posts what the platform did downstream of each of extauth's
// answers (clearings, cancels, refunds, force posts, fees). Written from the contract's format, not from
// extauth's reader, so the two can disagree.
import type { Clock } from './clock.js'

export const STATEMENT_FORMAT = 'extauth-v1'

/** the contract's posting types (§13) */
export const POSTING_KINDS = ['purchase', 'refund', 'reversal', 'load', 'transfer_out', 'transfer_in', 'unload', 'fee', 'adjustment'] as const
export type PostingKind = typeof POSTING_KINDS[number]

export interface BookPosting {
  platformId: string
  type: PostingKind
  reference: string
  urn: string
  /** '' when the posting names no card */
  last4: string
  /** minor units, positive */
  amount: number
  currency: string
  postedAtMs: number
}

export interface StatementPeriod {
  id: string
  fromMs: number
  /** exclusive */
  toMs: number
  /** every posting of the period is on it */
  complete: boolean
}

export interface PlatformJournalOptions {
  now: Clock
  /** the start of every platformId; default 'PF' */
  prefix?: string
  /** ISO 4217 numeric; default 356 */
  currency?: string
}

export class PlatformJournal {
  private readonly list: BookPosting[] = []
  private readonly prefix: string
  private readonly currency: string
  private seq = 0

  constructor (private readonly opts: PlatformJournalOptions) {
    this.prefix = opts.prefix ?? 'PF'
    this.currency = opts.currency ?? '356'
    if (!/^[A-Za-z0-9._:-]{1,40}$/.test(this.prefix)) throw new Error('platform journal prefix must be 1 to 40 letters, digits or ._:-')
  }

  post (p: { type: PostingKind, reference: string, urn: string, last4?: string, amount: number }): BookPosting {
    if (!Number.isSafeInteger(p.amount) || p.amount <= 0) throw new Error(`a posting's amount must be a positive integer (minor units), not ${p.amount}`)
    const posting: BookPosting = {
      platformId: `${this.prefix}-${++this.seq}`,
      type: p.type,
      reference: p.reference,
      urn: p.urn,
      last4: p.last4 ?? '',
      amount: p.amount,
      currency: this.currency,
      postedAtMs: this.opts.now()
    }
    this.list.push(posting)
    return posting
  }

  /** the postings of [fromMs, toMs), oldest first */
  postings (fromMs = 0, toMs = Number.MAX_SAFE_INTEGER): BookPosting[] {
    return this.list.filter((p) => p.postedAtMs >= fromMs && p.postedAtMs < toMs)
  }

  /** The statement of a period in extauth-v1: the header line, then the period's postings, oldest first. */
  statement (period: StatementPeriod): string {
    if (!/^[A-Za-z0-9._:-]{1,64}$/.test(period.id)) throw new Error('statement id must be 1 to 64 letters, digits or ._:-')
    if (!(period.toMs >= period.fromMs)) throw new Error('statement period: to is before from')
    const header = { statement: { id: period.id, from: iso(period.fromMs), to: iso(period.toMs), complete: period.complete } }
    const lines = this.postings(period.fromMs, period.toMs).map((p) => ({
      platformId: p.platformId,
      type: p.type,
      reference: p.reference,
      urn: p.urn,
      ...(p.last4 !== '' ? { last4: p.last4 } : {}),
      amount: String(p.amount),
      currency: p.currency,
      postedAt: iso(p.postedAtMs)
    }))
    return [header, ...lines].map((l) => JSON.stringify(l)).join('\n') + '\n'
  }
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}
