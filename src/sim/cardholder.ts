// A cardholder's day with card controls, for the issuer simulator, the demo and tests: the cardholder turns
// online payments on in the client's app, sets a daily limit, then travels abroad with international use
// off and then on. The app's calls go to the admin listener (PATCH .../controls); the spending goes to
// our endpoint as the platform sends it. The expected codes hold for a card on the RBI defaults
// (examples/card-controls.rbi.json) with enough funds and no rule in the way.
import type { AuthRequest } from '../domain/request.js'
import type { ControlEntries } from '../domain/controls.js'
import type { IssuerCard } from './issuer.js'

export type JourneyStep =
  | { kind: 'controls', what: string, patch: ControlEntries }
  | { kind: 'auth', what: string, body: AuthRequest, expect: { code: string, reason: string } }

export interface JourneyOptions {
  /** makes references unique per run */
  run: string
  /** the home currency (ISO 4217 numeric); default 356 */
  currencyCode?: string
  /** the currency billed abroad; default 840 */
  foreignCurrency?: string
}

/** The steps, in order; amounts in minor units. */
export function cardholderJourney (card: IssuerCard, opts: JourneyOptions): JourneyStep[] {
  const currencyCode = opts.currencyCode ?? '356'
  let n = 0
  const auth = (what: string, over: Partial<AuthRequest>, code: string, reason: string): JourneyStep => {
    n++
    const body: AuthRequest = {
      urn: card.urn,
      ...(card.customerId !== undefined ? { customerId: card.customerId } : {}),
      last4Digits: card.last4Digits,
      terminalId: 'TCH00001',
      systemTraceAuditNumber: String(n).padStart(6, '0'),
      cardNetwork: 'RUPAY',
      channel: 'POS',
      mcc: '5411',
      merchantName: 'FRESH MART',
      transactionAmount: '100',
      transactionReferenceNumber: `CH${opts.run}${String(n).padStart(4, '0')}`,
      currencyCode,
      ...over
    } as AuthRequest
    return { kind: 'auth', what, body, expect: { code, reason } }
  }
  const online = { channel: 'ECOM', mcc: '5942', merchantName: 'BOOK NOOK' }
  const abroad = { channel: 'POS', mcc: '5812', merchantName: 'CAFE DE PARIS', billingCurrency: opts.foreignCurrency ?? '840' }
  return [
    auth('books online, ECOM off for a new card', { ...online, transactionAmount: '150000' }, '05', 'control_off'),
    { kind: 'controls', what: 'turns ECOM on', patch: { ECOM: { enabled: true } } },
    auth('books online', { ...online, transactionAmount: '150000' }, '00', 'approved'),
    { kind: 'controls', what: 'sets an ECOM daily limit of 2,000.00', patch: { ECOM: { dailyMax: 200000 } } },
    auth('more books online, over the daily limit', { ...online, transactionAmount: '60000' }, '61', 'control_limit'),
    auth('a smaller order, up to the limit exactly', { ...online, transactionAmount: '50000' }, '00', 'approved'),
    auth('dinner abroad, international off', { ...abroad, transactionAmount: '400000', billingAmount: '4800' }, '05', 'control_off'),
    { kind: 'controls', what: 'turns international on', patch: { international: { enabled: true } } },
    auth('dinner abroad', { ...abroad, transactionAmount: '400000', billingAmount: '4800' }, '00', 'approved'),
    { kind: 'controls', what: 'removes the ECOM daily limit', patch: { ECOM: { dailyMax: null } } },
    auth('one more book online', { ...online, transactionAmount: '60000' }, '00', 'approved')
  ]
}
