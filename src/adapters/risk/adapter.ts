// The risk analysis adapter (spec B). It sits on the External Authorization path, so its default limit is
// short (RISK_TIMEOUT_MS, 300 ms) and a caller passes what is left of its own deadline as budgetMs.
import { AdapterOptionError } from '../transport/errors.js'
import { createPartyClient } from '../transport/http.js'
import type { CallOptions, Parsed } from '../transport/http.js'
import { callObserver } from '../transport/log-outcome.js'
import { partyCaller } from '../transport/party-call.js'
import { parseBaseUrl, requireText, resolveHttpOptions } from '../transport/options.js'
import type { AdapterDeps, HttpOptions, ResolvedHttpOptions } from '../transport/options.js'
import { buildRiskRequest } from './request.js'
import type { RiskAnalyseInput } from './request.js'
import type { Failed, Ok } from '../transport/result.js'
import { asBool, asId, boolLike, compile, idLike, schemaProblem } from '../transport/schema.js'

export type { RiskAnalyseInput, RiskWireRequest } from './request.js'

export const RISK_PATH = '/analyse/request'
export const RISK_DEFAULT_TIMEOUT_MS = 300

export interface RiskOptions extends HttpOptions {
  baseUrl: string
  /** sent as Authorization: Bearer <accessToken> */
  accessToken: string
  /** 4 digits */
  instanceId: string
  channelId: string
  /** the whole call's limit (RISK_TIMEOUT_MS); also caps headers and body waits unless those are given */
  timeoutMs?: number
  /** clock for the default txnTimestamp */
  now?: () => number
}

export interface RiskAssessment {
  /** total risk score; higher is riskier */
  ruleRating: number
  ruleSuggestion: string
  stepUp: boolean
  /** the risk service's tracking id */
  clientId: string
  /** present when details were asked for */
  nodeId?: string
  frictionLess?: boolean
  observationSummary?: Record<string, string>
  exceptions?: string[]
}

export type RiskResult = Ok<RiskAssessment> | Failed

export interface RiskAdapter {
  /** Rejects with EXTAUTH_ERR_ADAPTER_BAD_REQUEST, sending nothing, when the request is malformed. */
  analyse (input: RiskAnalyseInput, call?: CallOptions): Promise<RiskResult>
  close (): Promise<void>
}

interface RiskWireAnswer {
  ruleRating: string | number
  clientId: string | number
  ruleSuggestion: string
  stepUp: string | boolean
  NodeId?: string | number
  frictionLess?: string | boolean
  observationSummary?: Record<string, string | number>
  exceptions?: Array<string | number>
}

const validateAnswer = compile<RiskWireAnswer>({
  type: 'object',
  required: ['ruleRating', 'clientId', 'ruleSuggestion', 'stepUp'],
  properties: {
    ruleRating: { type: ['integer', 'string'], pattern: '^-?\\d{1,9}$' },
    clientId: idLike,
    ruleSuggestion: { type: 'string', minLength: 1, maxLength: 100 },
    stepUp: boolLike,
    NodeId: idLike,
    frictionLess: boolLike,
    observationSummary: { type: 'object', additionalProperties: { type: ['string', 'number'] } },
    exceptions: { type: 'array', items: { type: ['string', 'integer'] } }
  }
})

function parseAnswer (json: unknown): Parsed<Ok<RiskAssessment>> {
  if (!validateAnswer(json)) return { kind: 'unparsable', detail: schemaProblem(validateAnswer.errors) }
  const out: Ok<RiskAssessment> = {
    kind: 'ok',
    ruleRating: Number(json.ruleRating),
    ruleSuggestion: json.ruleSuggestion,
    stepUp: asBool(json.stepUp) ?? false,
    clientId: String(json.clientId)
  }
  const nodeId = asId(json.NodeId)
  if (nodeId !== undefined) out.nodeId = nodeId
  const frictionLess = asBool(json.frictionLess)
  if (frictionLess !== undefined) out.frictionLess = frictionLess
  if (json.observationSummary !== undefined) {
    out.observationSummary = Object.fromEntries(Object.entries(json.observationSummary).map(([k, v]) => [k, String(v)]))
  }
  if (json.exceptions !== undefined) out.exceptions = json.exceptions.map(String)
  return out
}

export function createRiskAdapter (options: RiskOptions, deps: AdapterDeps): RiskAdapter {
  const party = 'risk'
  const base = parseBaseUrl(party, requireText(party, 'baseUrl', options.baseUrl))
  const accessToken = requireText(party, 'accessToken', options.accessToken)
  const instanceId = requireText(party, 'instanceId', options.instanceId, /^\d{4}$/)
  const channelId = requireText(party, 'channelId', options.channelId, /^[A-Za-z0-9]{1,64}$/)
  const timeoutMs = options.timeoutMs ?? RISK_DEFAULT_TIMEOUT_MS
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) throw new AdapterOptionError('risk.timeoutMs: an integer >= 1')
  const http = resolveHttpOptions(party, options, riskDefaults(timeoutMs))
  const now = options.now ?? Date.now
  const log = deps.logger.child({ adapter: party })
  const client = createPartyClient(party, base, http, log)
  const post = partyCaller(client, log, callObserver(party, deps))

  return {
    async analyse (input, call) {
      const wire = buildRiskRequest(input, { instanceId, channelId }, now())
      return await post({
        op: 'analyse', path: RISK_PATH, headers: { authorization: `Bearer ${accessToken}` }, body: wire, parse: parseAnswer, refs: { clientTxnRefId: input.clientTxnRefId }
      }, call)
    },
    close: () => client.close()
  }
}

function riskDefaults (timeoutMs: number): ResolvedHttpOptions {
  return {
    connectTimeoutMs: Math.min(timeoutMs, 200),
    headersTimeoutMs: timeoutMs,
    bodyTimeoutMs: timeoutMs,
    totalTimeoutMs: timeoutMs,
    connections: 32,
    keepAliveTimeoutMs: 10_000,
    responseBytesMax: 64 * 1024,
    connectRetriesMax: 1
  }
}
