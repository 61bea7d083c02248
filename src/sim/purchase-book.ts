// The platform's books of its card purchases: what it did downstream of each of extauth's answers. An approval
// is an open authorization until the platform clears it (in full, in part or for more, as merchants do),
// cancels it after the 00 (a reversal), or marks it never completed (the merchant never clears it: the
// platform keeps it open until its own expiry, and extauth's hold waits for its expiry too). An answer lost on
// the wire is booked as no answer, which the platform reverses like a cancel. Refunds, force posts (a purchase
// the platform posts with no authorization, say offline) and fees post with no answer behind them. Every
// posting moves the wallet and goes to the journal, so the statement and the balances come from one book.
import type { AuthRequest } from '../domain/request.js'
import type { ExternalAuthOutcome } from './issuer.js'
import type { BookPosting, PlatformJournal } from './platform-book.js'
import type { WalletBook } from './wallet-book.js'

export type AuthorizationState = 'declined' | 'open' | 'no_answer' | 'cleared' | 'cancelled' | 'never_completed'

export interface BookedAuthorization {
  reference: string
  urn: string
  last4: string
  /** what the approval holds: (billingAmount or transactionAmount) + fee, minor units */
  authorized: number
  /** extauth's responseCode; null when no answer came */
  code: string | null
  state: AuthorizationState
  /** total cleared (several clearings may post against one authorization) */
  cleared: number
  refunded: number
}

export class PurchaseBookError extends Error {}

function minor (v: string | undefined): number {
  return v === undefined || v === '' ? 0 : Number(v)
}

function positive (n: number): number {
  if (!Number.isSafeInteger(n) || n <= 0) throw new PurchaseBookError(`an amount must be a positive integer (minor units), not ${n}`)
  return n
}

export class PurchaseBook {
  private readonly auths = new Map<string, BookedAuthorization>()

  constructor (private readonly wallets: WalletBook, private readonly journal: PlatformJournal) {}

  /** Books extauth's answer to an authorization the platform sent. A resend of a reference not approved replaces it. */
  record (body: AuthRequest, outcome: ExternalAuthOutcome): BookedAuthorization {
    const key = this.key(body.urn, body.transactionReferenceNumber)
    const before = this.auths.get(key)
    if (before !== undefined && (before.state !== 'declined' && before.state !== 'no_answer')) return before
    const answered = outcome.kind === 'answer' ? (outcome.body as { responseCode?: unknown } | null) : null
    const code = typeof answered?.responseCode === 'string' ? answered.responseCode : null
    const a: BookedAuthorization = {
      reference: body.transactionReferenceNumber,
      urn: body.urn,
      last4: body.last4Digits,
      authorized: minor(body.billingAmount ?? body.transactionAmount) + minor(body.fee),
      code,
      state: code === '00' ? 'open' : code === null ? 'no_answer' : 'declined',
      cleared: 0,
      refunded: 0
    }
    this.auths.set(key, a)
    return { ...a }
  }

  get (urn: string, reference: string): Readonly<BookedAuthorization> | undefined {
    const a = this.auths.get(this.key(urn, reference))
    return a === undefined ? undefined : { ...a }
  }

  all (): Array<Readonly<BookedAuthorization>> {
    return [...this.auths.values()].map((a) => ({ ...a }))
  }

  /** A clearing: the authorized amount by default, or less (partial) or more (a tip, an over clearing). */
  clear (urn: string, reference: string, amount?: number): BookPosting {
    const a = this.must(urn, reference, ['open', 'cleared'])
    const n = positive(amount ?? a.authorized)
    this.wallets.adjust(urn, -n)
    const p = this.journal.post({ type: 'purchase', reference, urn, last4: a.last4, amount: n })
    a.state = 'cleared'
    a.cleared += n
    return p
  }

  /** Cancelled after extauth's 00, or reversed after a lost answer: a reversal of the authorized amount; the wallet never moved. */
  cancel (urn: string, reference: string): BookPosting {
    const a = this.must(urn, reference, ['open', 'no_answer'])
    const p = this.journal.post({ type: 'reversal', reference, urn, last4: a.last4, amount: a.authorized })
    a.state = 'cancelled'
    return p
  }

  /** The merchant never completes it: nothing posts; it stays an open authorization of the cardholder's. */
  neverComplete (urn: string, reference: string): void {
    this.must(urn, reference, ['open']).state = 'never_completed'
  }

  /** Money back for a cleared purchase, at most what was cleared and not yet refunded. */
  refund (urn: string, reference: string, amount: number): BookPosting {
    const a = this.must(urn, reference, ['cleared'])
    if (positive(amount) > a.cleared - a.refunded) throw new PurchaseBookError(`a refund of ${amount} is more than ${a.cleared - a.refunded} left to refund on ${reference}`)
    this.wallets.adjust(urn, amount)
    const p = this.journal.post({ type: 'refund', reference, urn, last4: a.last4, amount })
    a.refunded += amount
    return p
  }

  /** A purchase the platform posts with no authorization behind it (offline, below the floor limit). */
  forcePost (urn: string, last4: string, reference: string, amount: number): BookPosting {
    if (this.auths.has(this.key(urn, reference))) throw new PurchaseBookError(`${reference} was authorized: clear it instead`)
    this.wallets.adjust(urn, -positive(amount))
    const p = this.journal.post({ type: 'purchase', reference, urn, last4, amount })
    return p
  }

  /** A fee the platform charges the cardholder. */
  fee (urn: string, reference: string, amount: number, last4?: string): BookPosting {
    this.wallets.adjust(urn, -positive(amount))
    const p = this.journal.post({ type: 'fee', reference, urn, ...(last4 !== undefined ? { last4 } : {}), amount })
    return p
  }

  /** What the cardholder's approvals still hold on the platform: open and never completed. */
  held (urn: string): number {
    let n = 0
    for (const a of this.auths.values()) if (a.urn === urn && (a.state === 'open' || a.state === 'never_completed')) n += a.authorized
    return n
  }

  private key (urn: string, reference: string): string {
    return `${urn}\u0000${reference}`
  }

  private must (urn: string, reference: string, states: readonly AuthorizationState[]): BookedAuthorization {
    const a = this.auths.get(this.key(urn, reference))
    if (a === undefined) throw new PurchaseBookError(`no authorization ${reference} of ${urn} in the platform's books`)
    if (!states.includes(a.state)) throw new PurchaseBookError(`authorization ${reference} is ${a.state}, not ${states.join(' or ')}`)
    return a
  }
}
