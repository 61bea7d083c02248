// A risk analysis simulator (spec B): checks the bearer token and the request's formats as strictly as
// the spec states them, and scores by a configurable function or table of amount bands.
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { registerControlRoutes } from './control-routes.js'
import { FaultBook } from './faults.js'
import type { Fault } from './faults.js'
import { header, isObject, simApp } from './sim-app.js'
import type { SimAppOptions } from './sim-app.js'
import { simRoute } from './sim-route.js'
import { SPEC_RISK_PATH } from './spec-values.js'

export const RISK_SIM_ROUTES = ['analyse'] as const
export type RiskSimRoute = typeof RISK_SIM_ROUTES[number]

export interface RiskVerdict {
  ruleRating: number
  ruleSuggestion: string
  stepUp: boolean
  /** triggered rule name → score, reported when details are asked for */
  observations?: Record<string, number>
}

/** A band applies when purchaseAmount (minor units) is below belowAmount; the last band may leave it out. */
export interface RiskBand extends RiskVerdict {
  belowAmount?: number
}

export type RiskScoring = readonly RiskBand[] | ((request: Record<string, string>) => RiskVerdict)

const bands: RiskBand[] = [
  { belowAmount: 500_000, ruleRating: 10, ruleSuggestion: 'ACCEPT', stepUp: false },
  { belowAmount: 2_500_000, ruleRating: 55, ruleSuggestion: 'CHALLENGE', stepUp: true, observations: { HIGH_AMOUNT: 45 } },
  { ruleRating: 90, ruleSuggestion: 'DENY', stepUp: true, observations: { HIGH_AMOUNT: 45, VERY_HIGH_AMOUNT: 35 } }
]
export const DEFAULT_RISK_BANDS: readonly RiskBand[] = Object.freeze(bands)

export interface RiskSimOptions extends SimAppOptions {
  accessToken: string
  /** when set, requests for any other instanceId are refused */
  instanceId?: string
  scoring?: RiskScoring
  faults?: Partial<Record<RiskSimRoute, Fault>>
}

export interface RiskSim {
  app: FastifyInstance
  faults: FaultBook<RiskSimRoute>
  /** the last RECEIVED_MAX requests as received, newest last (the simulator's view, for tests) */
  received: Array<Record<string, string>>
}

const RECEIVED_MAX = 100
const FLAG = /^(true|false)$/
const FORMATS: Record<string, RegExp> = {
  instanceId: /^\d{4}$/,
  channelId: /^[A-Za-z0-9]+$/,
  async: FLAG,
  details: FLAG,
  txnSourceType: /^[A-Za-z0-9]+$/,
  partRequest: FLAG,
  lastDrop: /^true$/,
  acctNumber: /^[A-Za-z0-9]+$/,
  txnTimestamp: /^\d{14}$/,
  clientTxnRefId: /^[A-Za-z0-9_-]+$/,
  purchaseAmount: /^\d+$/
}

function problems (body: unknown): string[] {
  if (!isObject(body)) return ['body must be an object']
  const out: string[] = []
  for (const [name, format] of Object.entries(FORMATS)) {
    const v = body[name]
    if (typeof v !== 'string') out.push(`${name} must be a string`)
    else if (!format.test(v)) out.push(`${name} is malformed`)
  }
  return out
}

function score (scoring: RiskScoring, request: Record<string, string>): RiskVerdict {
  if (typeof scoring === 'function') return scoring(request)
  const amount = Number(request.purchaseAmount)
  const band = scoring.find((b) => b.belowAmount === undefined || amount < b.belowAmount) ?? scoring[scoring.length - 1]
  if (band === undefined) throw new Error('risk sim scoring table is empty')
  return band
}

export function buildRiskSim (opts: RiskSimOptions): RiskSim {
  const scoring = opts.scoring ?? DEFAULT_RISK_BANDS
  const faults = new FaultBook(RISK_SIM_ROUTES, opts.faults)
  const app = simApp(opts)
  const received: Array<Record<string, string>> = []

  simRoute(app, faults, 'analyse', SPEC_RISK_PATH, (request) => {
    if (header(request.headers.authorization) !== `Bearer ${opts.accessToken}`) {
      return { status: 401, body: { errorCode: '401', errorMessage: 'invalid access token' } }
    }
    const bad = problems(request.body)
    if (bad.length > 0) return { status: 400, body: { errorCode: '400', errorMessage: bad.join('; ') } }
    const body = request.body as Record<string, string>
    if (opts.instanceId !== undefined && body.instanceId !== opts.instanceId) {
      return { status: 400, body: { errorCode: '400', errorMessage: 'unknown instanceId' } }
    }
    received.push(body)
    if (received.length > RECEIVED_MAX) received.shift()
    const verdict = score(scoring, body)
    const answer: Record<string, unknown> = {
      ruleRating: verdict.ruleRating,
      clientId: randomUUID(),
      ruleSuggestion: verdict.ruleSuggestion,
      stepUp: String(verdict.stepUp)
    }
    if (body.details === 'true') {
      answer.NodeId = 'sim-node-1'
      answer.frictionLess = String(!verdict.stepUp)
      answer.observationSummary = Object.fromEntries(Object.entries(verdict.observations ?? {}).map(([k, v]) => [k, String(v)]))
      answer.exceptions = []
    }
    return { body: answer }
  })

  registerControlRoutes(app, faults)
  return { app, faults, received }
}
