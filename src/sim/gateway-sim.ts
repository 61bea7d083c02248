// A payment gateway simulator (spec A) over HTTP: the envelope and its credentials are checked here,
// the transactions' rules live in GatewayBook. Inspection: lastOtp() and GET /__sim/otp/:merchantReferenceNo
// give the OTP "the customer received", since nothing else in a test can.
import type { FastifyInstance } from 'fastify'
import type { Clock } from './clock.js'
import { registerControlRoutes } from './control-routes.js'
import { FaultBook } from './faults.js'
import type { Fault } from './faults.js'
import { defaultOtpGenerator, GatewayBook, SIM_STATUS_FAILED } from './gateway-book.js'
import type { IssuerView, SimTransaction } from './gateway-book.js'
import { header, isObject, simApp } from './sim-app.js'
import type { SimAppOptions } from './sim-app.js'
import { simRoute } from './sim-route.js'
import { SIM_PRE_AUTH_CANCELLATION_ACTION, SPEC_GATEWAY_PATHS, SPEC_PRE_AUTH_COMPLETION_ACTION } from './spec-values.js'
import type { SimAnswer } from './sim-route.js'

export const GATEWAY_SIM_ROUTES = ['authorize', 'generateOtp', 'verifyOtp'] as const
export type GatewaySimRoute = typeof GATEWAY_SIM_ROUTES[number]

export interface GatewaySimOptions extends SimAppOptions {
  apiKey: string
  pgInstanceId: string
  merchantId: string
  now?: Clock
  /** deterministic OTPs for tests and demos; default: 6 random digits */
  otpGenerator?: (merchantReferenceNo: string) => string
  /** minutes, 0..30, default 5 */
  validityPeriodMin?: number
  /** default 3 */
  resendMax?: number
  /** default 3 */
  verifyMax?: number
  /** default: approve everything ('00') */
  issuer?: (t: IssuerView) => string
  preAuthCancellationAction?: string
  /** pre-auth capture answers in the transaction shape (default) or the sample's OTP shape */
  captureAnswerShape?: 'transaction' | 'otp'
  faults?: Partial<Record<GatewaySimRoute, Fault>>
}

type Opened = { body: Record<string, unknown> } | { refused: SimAnswer }

export interface GatewaySim {
  app: FastifyInstance
  faults: FaultBook<GatewaySimRoute>
  lastOtp (merchantReferenceNo: string): string | undefined
  transaction (merchantReferenceNo: string): Readonly<SimTransaction> | undefined
}

function limit (name: string, v: number | undefined, dflt: number, max: number): number {
  const out = v ?? dflt
  if (!Number.isSafeInteger(out) || out < 0 || out > max) throw new Error(`gateway sim option ${name} must be an integer from 0 to ${max}`)
  return out
}

export function buildGatewaySim (opts: GatewaySimOptions): GatewaySim {
  const book = new GatewayBook({
    now: opts.now ?? Date.now,
    otpGenerator: opts.otpGenerator ?? defaultOtpGenerator,
    validityPeriodMin: limit('validityPeriodMin', opts.validityPeriodMin, 5, 30),
    resendMax: limit('resendMax', opts.resendMax, 3, 100),
    verifyMax: limit('verifyMax', opts.verifyMax, 3, 100),
    issuer: opts.issuer ?? (() => '00'),
    completionAction: SPEC_PRE_AUTH_COMPLETION_ACTION,
    cancellationAction: opts.preAuthCancellationAction ?? SIM_PRE_AUTH_CANCELLATION_ACTION
  }, { merchantId: opts.merchantId, pgInstanceId: opts.pgInstanceId })
  const faults = new FaultBook(GATEWAY_SIM_ROUTES, opts.faults)
  const app = simApp(opts)
  const shape = opts.captureAnswerShape ?? 'transaction'

  /** The envelope's body when header and key are right; otherwise the refusal in the route's shape. */
  function open (raw: unknown, httpPgInstanceId: string | undefined, otpShaped: boolean): Opened {
    const refuse = (code: string, text: string): Opened => ({
      refused: {
        body: otpShaped
          ? { status: 'failed', errorcode: code, errormsg: text }
          : { status: SIM_STATUS_FAILED, pgErrorCode: code, pgErrorDetail: text }
      }
    })
    if (!isObject(raw) || !isObject(raw.header) || !isObject(raw.body) || typeof raw.header.version !== 'string') {
      return refuse('01', 'Missing Parameter')
    }
    const capture = raw.body.action !== undefined
    const key = capture ? raw.header.Authorization : raw.header['x-api-key']
    const instanceOk = raw.header.pgInstanceId === opts.pgInstanceId && (httpPgInstanceId === undefined || httpPgInstanceId === opts.pgInstanceId)
    if (key !== opts.apiKey || !instanceOk) return refuse('406', 'Not Authenticated')
    return { body: raw.body }
  }

  simRoute(app, faults, 'authorize', SPEC_GATEWAY_PATHS.authorize, (request) => {
    const o = open(request.body, header(request.headers.pginstanceid), shape === 'otp' && isCapture(request.body))
    if ('refused' in o) return o.refused
    return { body: o.body.action === undefined ? book.authorize(o.body) : book.capture(o.body, shape) }
  })

  simRoute(app, faults, 'generateOtp', SPEC_GATEWAY_PATHS.generateOtp, (request) => {
    const o = open(request.body, header(request.headers.pginstanceid), true)
    return 'refused' in o ? o.refused : { body: book.generateOtp(o.body) }
  })

  simRoute(app, faults, 'verifyOtp', SPEC_GATEWAY_PATHS.verifyOtp, (request) => {
    const o = open(request.body, header(request.headers.pginstanceid), true)
    return 'refused' in o ? o.refused : { body: book.verifyOtp(o.body) }
  })

  registerControlRoutes(app, faults)
  app.get<{ Params: { merchantReferenceNo: string } }>('/__sim/otp/:merchantReferenceNo', async (request, reply) => {
    const otp = book.lastOtp(request.params.merchantReferenceNo)
    return otp === undefined ? reply.code(404).send({ error: 'no valid OTP' }) : { otp }
  })

  return {
    app,
    faults,
    lastOtp: (mrn) => book.lastOtp(mrn),
    transaction: (mrn) => book.transaction(mrn)
  }
}

function isCapture (raw: unknown): boolean {
  return isObject(raw) && isObject(raw.body) && raw.body.action !== undefined
}
