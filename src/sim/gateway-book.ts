// The gateway simulator's transactions and their rules, kept apart from HTTP: OTP issue, resend and
// verification with their limits and expiry, authorize after a verified OTP, duplicates, and pre-auth
// completion and cancellation. Every method takes the call's body and returns the answer to send.
// Card data is not kept: only a hash of the PAN (to spot a reused reference) and its last four digits.
import { createHash, randomInt } from 'node:crypto'
import { gatewayCodeText } from './spec-values.js'
import type { Clock } from './clock.js'

export const SIM_STATUS_SUCCESS = '50020'
/** The spec lists only the success status; any other value is a failure, this one is ours. */
export const SIM_STATUS_FAILED = '50097'

export interface IssuerView {
  merchantReferenceNo: string
  /** minor units */
  amount: number
  currencyCode: string
  panLast4: string
}

export interface GatewayRules {
  now: Clock
  otpGenerator: (merchantReferenceNo: string) => string
  /** minutes, 0..30 */
  validityPeriodMin: number
  /** resends allowed per transaction before 453 */
  resendMax: number
  /** wrong OTPs allowed per transaction before 452 */
  verifyMax: number
  /** the issuer's answer to an authorize: '00' approves, any code of the table declines */
  issuer: (t: IssuerView) => string
  completionAction: string
  cancellationAction: string
}

export interface SimTransaction {
  merchantReferenceNo: string
  pgTransactionId: string
  panHash: string
  panLast4: string
  amount: number
  currencyCode: string
  ext: Record<string, string>
  otp?: { value: string, issuedAtMs: number }
  resends: number
  failedVerifies: number
  verifiedOtp?: string
  auth?: { code: string, approvalCode?: string, rrn?: string, schemeTransactionId?: string }
  capture: 'open' | 'completed' | 'cancelled'
  capturedAmount?: number
}

type Body = Record<string, unknown>

export function defaultOtpGenerator (): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0')
}

function str (v: unknown): string | undefined {
  if (typeof v === 'string' && v !== '') return v
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  return undefined
}

function missing (body: Body, names: string[]): boolean {
  return names.some((n) => str(body[n]) === undefined)
}

function otpAnswer (code: string, extra: Body = {}): Body {
  return { status: code === '00' ? 'success' : 'failed', errorcode: code, errormsg: code === '00' ? '' : gatewayCodeText(code), ...extra }
}

export class GatewayBook {
  private readonly txns = new Map<string, SimTransaction>()
  private seq = 0

  constructor (private readonly rules: GatewayRules, private readonly fixed: { merchantId: string, pgInstanceId: string }) {}

  transaction (merchantReferenceNo: string): Readonly<SimTransaction> | undefined {
    return this.txns.get(merchantReferenceNo)
  }

  /** The OTP the customer would have received last, while it is still the valid one. */
  lastOtp (merchantReferenceNo: string): string | undefined {
    return this.txns.get(merchantReferenceNo)?.otp?.value
  }

  private next (digits: number): string {
    this.seq++
    return String(10 ** (digits - 1) + this.seq)
  }

  private issue (tx: SimTransaction): Body {
    // a new OTP replaces the earlier one: only the latest can be verified
    tx.otp = { value: this.rules.otpGenerator(tx.merchantReferenceNo), issuedAtMs: this.rules.now() }
    return otpAnswer('00', { validityPeriod: String(this.rules.validityPeriodMin).padStart(2, '0'), pgTransactionId: tx.pgTransactionId })
  }

  private resend (tx: SimTransaction): Body {
    if (tx.verifiedOtp !== undefined) return otpAnswer('02', { pgTransactionId: tx.pgTransactionId })
    if (tx.resends >= this.rules.resendMax) return otpAnswer('453', { pgTransactionId: tx.pgTransactionId })
    tx.resends++
    return this.issue(tx)
  }

  generateOtp (body: Body): Body {
    const mrn = str(body.merchantReferenceNo)
    if (mrn === undefined || str(body.merchantId) === undefined) return otpAnswer('01')
    if (body.merchantId !== this.fixed.merchantId) return otpAnswer('07')
    const tx = this.txns.get(mrn)
    const pan = str(body.pan)
    // the resend form carries no card: it names the transaction only
    if (pan === undefined) return tx === undefined ? otpAnswer('01') : this.resend(tx)
    if (missing(body, ['expDate', 'cvd2', 'amount', 'currencCode'])) return otpAnswer('01')
    if (!/^(0[1-9]|1[0-2])\d{4}$/.test(String(body.expDate)) || !/^\d{3,4}$/.test(String(body.cvd2)) ||
      !/^\d{3}$/.test(String(body.currencCode))) return otpAnswer('07')
    const amount = String(body.amount)
    if (!/^\d{1,12}$/.test(amount) || Number(amount) === 0) return otpAnswer('13')
    const panHash = createHash('sha256').update(pan).digest('hex')
    if (tx !== undefined) return tx.panHash === panHash ? this.resend(tx) : otpAnswer('454')
    const created: SimTransaction = {
      merchantReferenceNo: mrn,
      pgTransactionId: this.next(8),
      panHash,
      panLast4: pan.slice(-4),
      amount: Number(amount),
      currencyCode: String(body.currencCode),
      ext: Object.fromEntries(Object.entries(body).filter(([k, v]) => /^ext\d+$/.test(k) && typeof v === 'string')) as Record<string, string>,
      resends: 0,
      failedVerifies: 0,
      capture: 'open'
    }
    this.txns.set(mrn, created)
    return this.issue(created)
  }

  verifyOtp (body: Body): Body {
    if (missing(body, ['merchantId', 'merchantRefernceNo', 'otp', 'pgTransactionId'])) return otpAnswer('01')
    if (body.merchantId !== this.fixed.merchantId ||
      (body.pgInstanceId !== undefined && body.pgInstanceId !== this.fixed.pgInstanceId)) return otpAnswer('07')
    const tx = this.txns.get(String(body.merchantRefernceNo))
    if (tx === undefined || tx.pgTransactionId !== str(body.pgTransactionId)) return otpAnswer('07')
    const ids = { pgTransactionId: tx.pgTransactionId }
    const otp = String(body.otp)
    if (tx.verifiedOtp !== undefined) {
      // a repeated verify of the OTP that succeeded is answered the same (the first answer may be lost)
      return tx.verifiedOtp === otp ? this.verified(tx) : otpAnswer('450', ids)
    }
    if (tx.failedVerifies >= this.rules.verifyMax) return otpAnswer('452', ids)
    if (tx.otp === undefined) return otpAnswer('450', ids)
    if (this.rules.now() - tx.otp.issuedAtMs >= this.rules.validityPeriodMin * 60_000) return otpAnswer('451', ids)
    if (tx.otp.value !== otp) {
      tx.failedVerifies++
      return otpAnswer('450', ids)
    }
    tx.verifiedOtp = otp
    delete tx.otp
    return this.verified(tx)
  }

  private verified (tx: SimTransaction): Body {
    return otpAnswer('00', { pgTransactionId: tx.pgTransactionId, authResponseCode: '00', tranCtxId: `ctx${tx.pgTransactionId}` })
  }

  private txnAnswer (tx: SimTransaction | undefined, code: string, detail?: string, extra: Body = {}): Body {
    const ok = code === '0'
    const out: Body = {
      status: ok ? SIM_STATUS_SUCCESS : SIM_STATUS_FAILED,
      pgErrorCode: code,
      pgErrorDetail: detail ?? (ok ? 'SUCCESS' : gatewayCodeText(code)),
      ...extra
    }
    if (tx !== undefined) {
      // numbers where the spec says numeric, to keep callers honest about "50020" vs 50020
      out.transactionId = Number(tx.pgTransactionId)
      out.merchantReferenceNo = tx.merchantReferenceNo
      out.creditDebitCardFlag = 'P'
      for (let i = 1; i <= 10; i++) out[`ext${i}`] = tx.ext[`ext${i}`] ?? null
    }
    return out
  }

  private lookup (body: Body, required: string[]): { tx?: SimTransaction, answer?: Body } {
    if (missing(body, required)) return { answer: this.txnAnswer(undefined, '01') }
    if (body.merchantId !== this.fixed.merchantId ||
      (body.pgInstanceId !== undefined && body.pgInstanceId !== this.fixed.pgInstanceId)) return { answer: this.txnAnswer(undefined, '07') }
    const tx = this.txns.get(String(body.merchantRefernceNo))
    if (tx === undefined || tx.pgTransactionId !== str(body.pgTransactionId)) return { answer: this.txnAnswer(undefined, '07') }
    return { tx }
  }

  authorize (body: Body): Body {
    const { tx, answer } = this.lookup(body, ['pgInstanceId', 'merchantId', 'merchantRefernceNo', 'pgTransactionId'])
    if (tx === undefined) return answer ?? this.txnAnswer(undefined, '07')
    if (tx.auth !== undefined) {
      const approved = tx.auth.code === '00'
      return this.txnAnswer(tx, '96', approved ? 'PREVIOUSLY AUTHORIZED' : 'PREVIOUSLY DECLINED',
        approved ? { approvalCode: tx.auth.approvalCode, rrn: tx.auth.rrn } : {})
    }
    if (tx.verifiedOtp === undefined) return this.txnAnswer(tx, '409')
    const code = this.rules.issuer({ merchantReferenceNo: tx.merchantReferenceNo, amount: tx.amount, currencyCode: tx.currencyCode, panLast4: tx.panLast4 })
    if (code !== '00') {
      tx.auth = { code }
      return this.txnAnswer(tx, code)
    }
    tx.auth = { code, approvalCode: this.next(6).slice(-6), rrn: this.next(15), schemeTransactionId: `SCH${this.next(12)}` }
    return this.txnAnswer(tx, '0', undefined, { approvalCode: tx.auth.approvalCode, rrn: tx.auth.rrn, schemeTransactionId: tx.auth.schemeTransactionId })
  }

  /** Pre-auth completion or cancellation; 'otp' answers in the sample's status-word shape. */
  capture (body: Body, shape: 'transaction' | 'otp'): Body {
    const answer = (tx: SimTransaction | undefined, code: string, detail?: string, extra: Body = {}): Body => {
      if (shape === 'transaction') return this.txnAnswer(tx, code, detail, extra)
      const otpCode = code === '0' ? '00' : code
      const out = otpAnswer(otpCode, { ...extra, pgTransactionId: tx?.pgTransactionId })
      if (detail !== undefined && otpCode !== '00') out.errormsg = detail
      return out
    }
    const { tx, answer: refused } = this.lookup(body, ['merchantId', 'merchantRefernceNo', 'pgTransactionId', 'action', 'transactionTypeCode'])
    if (tx === undefined) {
      if (shape === 'transaction') return refused ?? this.txnAnswer(undefined, '07')
      return otpAnswer(String(refused?.pgErrorCode ?? '07'))
    }
    const completing = body.action === this.rules.completionAction
    if (!completing && body.action !== this.rules.cancellationAction) return answer(tx, '02')
    if (tx.auth?.code !== '00') return answer(tx, '02')
    if (tx.capture === 'completed' && completing) return answer(tx, '96', 'PREVIOUSLY AUTHORIZED')
    if (tx.capture !== 'open') return answer(tx, '02')
    let amount = tx.amount
    if (body.amount !== undefined) {
      const a = String(body.amount)
      if (!/^\d{1,12}$/.test(a) || Number(a) === 0 || Number(a) > tx.amount) return answer(tx, '13')
      amount = Number(a)
    }
    const ids = { approvalCode: tx.auth.approvalCode, rrn: tx.auth.rrn, schemeTransactionId: tx.auth.schemeTransactionId }
    if (completing) {
      tx.capture = 'completed'
      tx.capturedAmount = amount
    } else {
      tx.capture = 'cancelled'
    }
    return answer(tx, '0', undefined, shape === 'otp' ? { ...ids, transactionId: tx.pgTransactionId } : ids)
  }
}
