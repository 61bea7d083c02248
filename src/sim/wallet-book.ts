// The prepaid simulator's wallets and the rules of its two money calls, apart from HTTP and tokens.
// The transfer's plaintext request is not in the spec; this book reads the shape our adapter sends
// (messageCode, clientTxnId, requestDateTime, senders[1], receivers[1] with urn or customerId,
// accountNumber and transactionAmount) and answers with the spec's response fields and codes. The Unload
// (messageCode 3450) follows the spec's Encrypt table; its answer, which the spec does not show, carries
// the fields of Decrypt's example. A clientTxnId is used once across both calls. With a journal, each call
// done is posted there (a transfer's two sides, an unload's amount and fee together) for the statement.
import type { PlatformJournal } from './platform-book.js'
import { SPEC_UNLOAD_MESSAGE_CODE, walletCodeText as walletCodeDescription } from './spec-values.js'

export interface SimCustomer {
  urn: string
  customerId: string
  accountNumber: string
  /** minor units */
  balance: number
}

type Body = Record<string, unknown>

/** A code the platform answers instead of running a call (tests and demos use it for declines the book never makes). */
export type SimRefusal = (call: 'transfer' | 'unload', request: Readonly<Body>) => string | undefined

interface Leg {
  urn?: string
  customerId?: string
  accountNumber?: string
  amount?: unknown
}

export class WalletBook {
  private readonly byUrn = new Map<string, SimCustomer>()
  private readonly byCustomerId = new Map<string, SimCustomer>()
  private readonly done = new Set<string>()
  private ledgerSeq = 0

  constructor (
    customers: readonly SimCustomer[] = [],
    private readonly refusal: SimRefusal = () => undefined,
    private readonly journal?: PlatformJournal
  ) {
    for (const c of customers) this.add(c)
  }

  add (c: SimCustomer): void {
    if (!Number.isSafeInteger(c.balance) || c.balance < 0) throw new Error('customer balance must be a non-negative integer (minor units)')
    const copy = { ...c }
    this.byUrn.set(c.urn, copy)
    this.byCustomerId.set(c.customerId, copy)
  }

  customer (urn: string): Readonly<SimCustomer> | undefined {
    return this.byUrn.get(urn)
  }

  customers (): Array<Readonly<SimCustomer>> {
    return [...this.byUrn.values()]
  }

  /**
   * A posting of the platform's own (a clearing, a refund, a fee...) moves the wallet by delta. The books rule:
   * a clearing or a fee posts even past the balance, so a wallet may go below zero here, as on a real platform.
   */
  adjust (urn: string, delta: number): void {
    const c = this.byUrn.get(urn)
    if (c === undefined) throw new Error(`no wallet ${urn}`)
    if (!Number.isSafeInteger(delta)) throw new Error('a wallet moves by whole minor units')
    c.balance += delta
  }

  private find (leg: Leg): SimCustomer | undefined {
    return leg.urn !== undefined ? this.byUrn.get(leg.urn) : this.byCustomerId.get(leg.customerId ?? '')
  }

  /** The plaintext answer to a decrypted transfer request. */
  transfer (req: Body, ctx: { clientId: string, bankId: string, responseDateTime: string }): Body {
    const { base, refuse } = answerFrame(req, ctx)

    if (req.messageCode === undefined || req.messageCode === null || String(req.messageCode).trim() === '') return refuse('303193')
    if (typeof req.clientTxnId !== 'string' || req.clientTxnId === '' || req.clientTxnId.length > 100) return refuse('1093')
    const when = req.requestDateTime
    if (when === undefined || when === null || when === '') return refuse('1320')
    if (String(when).length > 14) return refuse('303178')
    if (!/^\d{14}$/.test(String(when))) return refuse('1088')
    if (!Array.isArray(req.senders) || !Array.isArray(req.receivers) || req.senders.length !== 1 || req.receivers.length !== 1) return refuse('1055')
    const s = leg(req.senders[0])
    const r = leg(req.receivers[0])
    if (s === undefined || r === undefined) return refuse('1055')
    if (s.urn !== undefined && s.customerId !== undefined) return refuse('6917')
    if (r.urn !== undefined && r.customerId !== undefined) return refuse('6918')
    if (s.accountNumber === undefined) return refuse('6900')
    if (r.accountNumber === undefined) return refuse('6901')
    const amount = s.amount
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) return refuse('6921')
    if (typeof r.amount !== 'number' || !Number.isSafeInteger(r.amount) || r.amount <= 0) return refuse('6934')
    if (r.amount !== amount) return refuse('1104')
    const sender = this.find(s)
    if (sender === undefined) return refuse(s.urn !== undefined ? '1107' : '6909')
    const receiver = this.find(r)
    if (receiver === undefined) return refuse(r.urn !== undefined ? '1110' : '6910')
    if (sender.accountNumber !== s.accountNumber || receiver.accountNumber !== r.accountNumber) return refuse('6902')
    if (sender === receiver) return refuse('1081')
    if (this.done.has(req.clientTxnId)) return refuse('1054')
    const forced = this.refusal('transfer', req)
    if (forced !== undefined) return refuse(forced)
    if (sender.balance < amount) return refuse('6919')

    sender.balance -= amount
    receiver.balance += amount
    this.done.add(req.clientTxnId)
    this.journal?.post({ type: 'transfer_out', reference: req.clientTxnId, urn: sender.urn, amount })
    this.journal?.post({ type: 'transfer_in', reference: req.clientTxnId, urn: receiver.urn, amount })
    const ledgerTransactionId = 1_000_000_000 + ++this.ledgerSeq
    const side = (c: SimCustomer): Body => ({
      urn: c.urn, customerId: c.customerId, ledgerRefNo: 2_000_000_000 + ++this.ledgerSeq, availableBalance: c.balance, transactionAmount: amount
    })
    return {
      ...base,
      responseCode: '00',
      responseMessage: walletCodeDescription('00'),
      urn: sender.urn,
      customerId: sender.customerId,
      ledgerTransactionId,
      transactionAmount: amount,
      availableBalance: sender.balance,
      senders: [side(sender)],
      receivers: [side(receiver)]
    }
  }

  /** The plaintext answer to a decrypted Unload request: the wallet pays amount + fee. */
  unload (req: Body, ctx: { clientId: string, bankId: string, responseDateTime: string }): Body {
    const { base, refuse } = answerFrame(req, ctx)
    const text = (x: unknown): x is string => typeof x === 'string' && x !== ''
    const int = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x)

    if (req.messageCode === undefined || req.messageCode === null || String(req.messageCode).trim() === '') return refuse('303193')
    if (String(req.messageCode) !== SPEC_UNLOAD_MESSAGE_CODE) return refuse('1030')
    if (typeof req.clientTxnId !== 'string' || req.clientTxnId === '' || req.clientTxnId.length > 100) return refuse('1093')
    const when = req.requestDateTime
    if (when === undefined || when === null || when === '') return refuse('1320')
    if (String(when).length > 14) return refuse('303178')
    if (!/^\d{14}$/.test(String(when))) return refuse('1088')
    if (!text(req.customerId) || !text(req.receiver) || !text(req.fundFlowType) || !text(req.implId) || !text(req.implType)) return refuse('1055')
    if (!int(req.beneficiaryId)) return refuse('1055')
    if (req.customerMobile !== undefined && req.customerMobile !== null && typeof req.customerMobile !== 'string') return refuse('1055')
    const r1 = req.reservedField1
    if (r1 !== undefined && r1 !== null && (typeof r1 !== 'object' || Array.isArray(r1))) return refuse('6911')
    if (!text(req.accountNumber)) return refuse('6900')
    if (req.sourceType !== 0 && req.sourceType !== 1) return refuse('6920')
    const amount = req.transactionAmount
    if (!int(amount) || amount <= 0) return refuse('6921')
    const fee = req.fee
    if (!int(fee) || fee < 0) return refuse('6936')
    const wallet = this.byCustomerId.get(req.customerId)
    if (wallet === undefined) return refuse('6909')
    if (wallet.accountNumber !== req.accountNumber) return refuse('6905')
    if (this.done.has(req.clientTxnId)) return refuse('1054')
    const forced = this.refusal('unload', req)
    if (forced !== undefined) return refuse(forced)
    if (wallet.balance < amount + fee) return refuse('6919')

    wallet.balance -= amount + fee
    this.done.add(req.clientTxnId)
    this.journal?.post({ type: 'unload', reference: req.clientTxnId, urn: wallet.urn, amount: amount + fee })
    return {
      ...base,
      responseCode: '00',
      responseMessage: walletCodeDescription('00'),
      customerId: wallet.customerId,
      urn: wallet.urn,
      ledgerTransactionId: 1_000_000_000 + ++this.ledgerSeq,
      ledgerRefNo: 2_000_000_000 + ++this.ledgerSeq,
      transactionAmount: amount,
      fee,
      availableBalance: wallet.balance
    }
  }
}

function leg (v: unknown): Leg | undefined {
  if (typeof v !== 'object' || v === null) return undefined
  const o = v as Record<string, unknown>
  const text = (x: unknown): string | undefined => (typeof x === 'string' && x !== '') ? x : undefined
  const out: Leg = { amount: o.transactionAmount }
  const urn = text(o.urn)
  const customerId = text(o.customerId)
  const accountNumber = text(o.accountNumber)
  if (urn !== undefined) out.urn = urn
  if (customerId !== undefined) out.customerId = customerId
  if (accountNumber !== undefined) out.accountNumber = accountNumber
  return out
}

/** What every wallet answer carries, and a refusal with a wallet code. */
function answerFrame (req: Body, ctx: { clientId: string, bankId: string, responseDateTime: string }): { base: Body, refuse: (code: string) => Body } {
  const base: Body = {
    messageCode: req.messageCode,
    clientTxnId: req.clientTxnId,
    clientId: ctx.clientId,
    bankId: Number(ctx.bankId),
    responseDateTime: ctx.responseDateTime
  }
  return { base, refuse: (code) => ({ ...base, responseCode: code, responseMessage: walletCodeDescription(code) }) }
}
