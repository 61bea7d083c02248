// Card loads through the gateway's OTP flow: generate (or resend) an OTP, verify it, authorize, and on
// status 50020 credit the amount to the customer once. The card data passes through to the gateway and is
// never logged or stored: the record keeps the last four digits only.
import { type GatewayAdapter, type GatewayDeclined, type GenerateOtpInput, uncertainDecline } from '../adapters/index.js'
import type { Store } from '../store/types.js'
import { StoreRejection } from '../errors.js'
import { failedAnswer, MONEY_REFERENCE_HORIZON_MS, STALE_RECONCILE, type LifecycleAnswer, type LifecycleStatus, type Upstream } from './answer.js'
import { LifecycleConflict, LifecycleNotFound } from './errors.js'
import { type FailedHook, LIFECYCLE_LOCK_TTL_MS_DEFAULT, RecordBook, type Revised } from './records.js'
import { refuseClosedReceiver } from './receiver.js'
import { authorizesSoFar } from './earlier-formats.js'

const PREVIOUSLY_AUTHORIZED_RECONCILE = 'the gateway answered 96 PREVIOUSLY AUTHORIZED to this load\'s only authorize: the card was ' +
  'charged for an earlier load of this merchantReferenceNo whose record was forgotten; nothing was credited for this one. ' +
  'Check the customer\'s credits for the earlier charge (reference load:<merchantReferenceNo>) and credit it by hand if missing'

export interface LoadRecord extends Revised {
  merchantReferenceNo: string
  urn: string
  /** minor units, digit string */
  amount: string
  currencyCode: string
  cardLast4: string
  status: LifecycleStatus
  pgTransactionId: string | null
  upstream: Upstream | null
  /**
   * AUTHORIZED: whether the credit may have begun. Saved false with AUTHORIZED and true before the credit,
   * so a resume however late knows that false means it was never made (absent on older records: unknown).
   */
  crediting?: boolean
  /**
   * authorizes that may have reached the gateway, counted before each is made and taken off again when it
   * certainly did not leave (absent on records from before the count: unknown, at least one; see
   * earlier-formats.ts). 96 PREVIOUSLY AUTHORIZED to the first is about an earlier load of the same
   * merchantReferenceNo (one whose record was forgotten), never a charge of this one.
   */
  authorizes?: number
  /** FAILED: what a person must check before the load can be settled */
  reconcile?: string
  createdAtMs: number
  updatedAtMs: number
}

export interface LoadRequest extends Omit<GenerateOtpInput, 'amount'> {
  urn: string
  amount: number
}

export interface LoadAnswer extends LifecycleAnswer {
  merchantReferenceNo: string
  urn: string
  amount: string
  validityPeriodMin?: number
  available?: string
  reconcile?: string
}

const CREDIT_PREFIX = 'load:'

function upstreamOf (d: GatewayDeclined): Upstream {
  return { code: d.code, description: d.description }
}

/** verify OTP declines → status words; anything else is a DECLINED with the gateway's code */
function otpStatus (d: GatewayDeclined): LifecycleStatus {
  switch (d.family) {
    case 'otp_invalid': return 'OTP_INVALID'
    case 'otp_expired': return 'OTP_EXPIRED'
    case 'otp_exhausted': case 'otp_resend_exhausted': return 'OTP_EXHAUSTED'
    default: return 'DECLINED'
  }
}

const FINAL: ReadonlySet<LifecycleStatus> = new Set(['LOADED', 'DECLINED', 'OTP_EXHAUSTED', 'FAILED'])

/**
 * The loads that may expire after their lifetime: settled (LOADED, DECLINED, OTP_EXHAUSTED), or not yet at
 * the card (an OTP sent or refused: nothing was asked of the issuer). OTP_VERIFIED (an authorize may have
 * charged the card, its answer lost), AUTHORIZED (charged, not credited yet) and FAILED (left to an
 * operator: charged, the credit unconfirmed) are kept until settled: forgotten, the resume would find no
 * load and the card would never be credited.
 */
const MAY_EXPIRE: ReadonlySet<LifecycleStatus> = new Set(['LOADED', 'DECLINED', 'OTP_EXHAUSTED', 'OTP_SENT', 'OTP_INVALID', 'OTP_EXPIRED'])

export class LoadService {
  private readonly records: RecordBook<LoadRecord>

  constructor (private readonly store: Store, private readonly gateway: GatewayAdapter, private readonly clock: () => number = Date.now,
    lockTtlMs = LIFECYCLE_LOCK_TTL_MS_DEFAULT,
    /** a load left FAILED with a reconcile note, for the operator's queue */
    onFailed?: FailedHook
  ) {
    this.records = new RecordBook<LoadRecord>(store, 'load', lockTtlMs, (r) => MAY_EXPIRE.has(r.status), (r) => r, onFailed)
  }

  private answer (r: LoadRecord, extra: Partial<LoadAnswer> = {}): LoadAnswer {
    return {
      merchantReferenceNo: r.merchantReferenceNo, urn: r.urn, amount: r.amount, status: r.status, upstream: r.upstream,
      ...(r.status === 'FAILED' ? { retryable: false, reconcile: r.reconcile } : {}),
      ...extra
    }
  }

  private async save (r: LoadRecord, patch: Partial<LoadRecord>): Promise<LoadRecord> {
    return await this.records.save(r.merchantReferenceNo, r, { ...r, ...patch, updatedAtMs: this.clock() })
  }

  async get (ref: string): Promise<LoadAnswer> {
    const r = await this.records.find(ref)
    if (r === null) throw new LifecycleNotFound('LOAD_NOT_FOUND', `no load ${ref}`)
    return this.answer(r)
  }

  /**
   * Before the gateway is asked for an OTP or the card: a customer closed since the load began receives
   * nothing (the load stands, and goes on should the customer be reopened).
   */
  private async refuseClosed (urn: string): Promise<void> {
    const customer = await this.store.getCustomer(urn)
    if (customer !== null) refuseClosedReceiver(customer)
  }

  /** POST /v1/loads: sends the OTP. Repeating it returns the load as it stands, without a second OTP. */
  async start (req: LoadRequest): Promise<LoadAnswer> {
    const ref = req.merchantReferenceNo
    const customer = await this.store.getCustomer(req.urn)
    if (customer === null) throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${req.urn}`)
    return await this.records.locked(ref, async (renew) => {
      const existing = await this.records.find(ref)
      if (existing !== null) {
        if (existing.urn !== req.urn || existing.amount !== String(req.amount) || existing.cardLast4 !== req.pan.slice(-4)) {
          throw new LifecycleConflict('REFERENCE_CONFLICT', `load ${ref} exists with another customer, amount or card`)
        }
        return this.answer(existing, { replayed: true })
      }
      refuseClosedReceiver(customer)
      const { urn, amount, ...otp } = req
      await renew()
      const res = await this.gateway.generateOtp({ ...otp, amount })
      if (res.kind === 'failed') return { merchantReferenceNo: ref, urn, amount: String(amount), ...failedAnswer(res) }
      const now = this.clock()
      const record: LoadRecord = {
        merchantReferenceNo: ref,
        urn,
        amount: String(amount),
        currencyCode: req.currencyCode,
        cardLast4: req.pan.slice(-4),
        status: res.kind === 'ok' ? 'OTP_SENT' : otpStatus(res),
        authorizes: 0,
        pgTransactionId: res.kind === 'ok' ? res.pgTransactionId ?? null : res.pgTransactionId ?? null,
        upstream: res.kind === 'ok' ? { code: '00', description: 'success' } : upstreamOf(res),
        createdAtMs: now,
        updatedAtMs: now
      }
      await this.records.save(ref, null, record)
      return this.answer(record, res.kind === 'ok' && res.validityPeriodMin !== undefined ? { validityPeriodMin: res.validityPeriodMin } : {})
    })
  }

  /** POST /v1/loads/:ref/otp/resend: a new OTP (earlier ones stop working). */
  async resend (ref: string, contact: { mobileNumber?: string, email?: string }): Promise<LoadAnswer> {
    return await this.records.locked(ref, async (renew) => {
      const r = await this.records.find(ref)
      if (r === null) throw new LifecycleNotFound('LOAD_NOT_FOUND', `no load ${ref}`)
      if (!['OTP_SENT', 'OTP_INVALID', 'OTP_EXPIRED'].includes(r.status)) return this.answer(r, { replayed: true })
      await this.refuseClosed(r.urn)
      await renew()
      const res = await this.gateway.resendOtp({ merchantReferenceNo: ref, ...contact })
      if (res.kind === 'failed') return this.answer(r, failedAnswer(res))
      if (res.kind === 'declined') return this.answer(await this.save(r, { status: otpStatus(res), upstream: upstreamOf(res) }))
      const next = await this.save(r, { status: 'OTP_SENT', upstream: { code: '00', description: 'success' }, pgTransactionId: res.pgTransactionId ?? r.pgTransactionId })
      return this.answer(next, res.validityPeriodMin !== undefined ? { validityPeriodMin: res.validityPeriodMin } : {})
    })
  }

  /**
   * POST /v1/loads/:ref/otp: verify, authorize, credit. Each step's outcome is recorded before the next,
   * so a retry after any failure (or a crash) resumes where it stopped and credits exactly once.
   */
  async verify (ref: string, otp: string): Promise<LoadAnswer> {
    return await this.records.locked(ref, async (renew) => {
      let r = await this.records.find(ref)
      if (r === null) throw new LifecycleNotFound('LOAD_NOT_FOUND', `no load ${ref}`)
      if (FINAL.has(r.status)) {
        // a FAILED load is handed to the operator's queue again, in case the first hand-over failed
        await this.records.noteFailed(ref, r)
        return this.answer(r, { replayed: true })
      }
      const pgTransactionId = r.pgTransactionId
      if (pgTransactionId === null) throw new LifecycleConflict('WRONG_STATE', `load ${ref} has no gateway transaction to verify`)

      if (r.status === 'OTP_SENT' || r.status === 'OTP_INVALID' || r.status === 'OTP_EXPIRED') {
        await this.refuseClosed(r.urn)
        await renew()
        const v = await this.gateway.verifyOtp({ merchantReferenceNo: ref, pgTransactionId, otp })
        if (v.kind === 'failed') return this.answer(r, failedAnswer(v))
        if (v.kind === 'declined') return this.answer(await this.save(r, { status: otpStatus(v), upstream: upstreamOf(v) }))
        r = await this.save(r, { status: 'OTP_VERIFIED', upstream: { code: '00', description: 'OTP verified' } })
      }

      if (r.status === 'OTP_VERIFIED') {
        await renew()
        r = await this.save(r, { authorizes: authorizesSoFar(r) + 1 })
        const a = await this.gateway.authorize({ merchantReferenceNo: ref, pgTransactionId })
        if (a.kind === 'failed') {
          // never reached the gateway: not counted, so a 96 to the next one is still told apart
          if (!a.sent) r = await this.save(r, { authorizes: authorizesSoFar(r) - 1 })
          return this.answer(r, failedAnswer(a))
        }
        if (a.kind === 'declined' && a.previously === 'authorized' && r.authorizes === 1) {
          // 96 PREVIOUSLY AUTHORIZED to our only authorize: the gateway charged the card for an earlier load of
          // this merchantReferenceNo (its record forgotten), not for this one. Whether that charge was credited
          // is no longer known here (credited, as a rule; not if the earlier record was forgotten before its
          // credit): nothing is credited now, and an operator checks
          return this.answer(await this.save(r, { status: 'FAILED', upstream: upstreamOf(a), reconcile: PREVIOUSLY_AUTHORIZED_RECONCILE }))
        }
        if (a.kind === 'declined' && a.previously !== 'authorized') {
          // a system error, a code outside the table or a non-2xx may come after the issuer approved (91:
          // it answered late): the load stays OTP_VERIFIED, and the repeat's authorize hears 96 PREVIOUSLY
          // AUTHORIZED if the card was charged
          const unsure = a.previously === 'declined' ? null : uncertainDecline(a)
          if (unsure !== null) return this.answer(r, failedAnswer(unsure))
          return this.answer(await this.save(r, { status: 'DECLINED', upstream: upstreamOf(a) }))
        }
        // approved now, or a repeat of an authorize that had been approved before we recorded it
        r = await this.save(r, { status: 'AUTHORIZED', upstream: a.kind === 'ok' ? { code: '00', description: `status ${a.status}` } : upstreamOf(a), crediting: false })
      }

      // AUTHORIZED: the gateway has the money; the credit is idempotent on the load's reference while the
      // store remembers it, and recorded as begun first: one that never began is made however late
      if (r.crediting !== false && this.clock() - r.updatedAtMs >= MONEY_REFERENCE_HORIZON_MS) return this.answer(await this.save(r, { status: 'FAILED', reconcile: STALE_RECONCILE }))
      if (r.crediting !== true) r = await this.save(r, { crediting: true })
      try {
        const c = await this.store.credit(r.urn, Number(r.amount), CREDIT_PREFIX + ref, { type: 'load.completed', details: { clientTxnId: ref } })
        r = await this.save(r, { status: 'LOADED' })
        return this.answer(r, { available: String(c.available) })
      } catch (err) {
        if (err instanceof StoreRejection && err.word === 'CUSTOMER_NOT_FOUND') throw new LifecycleNotFound('CUSTOMER_NOT_FOUND', `no customer ${r.urn}`)
        throw err
      }
    })
  }
}
