// Prometheus metrics, on a registry of the app's own (tests build several apps in one process). Labelled
// counters start at zero for the labels known in advance, so a rate or an alert on a series sees its first
// increment (a series that appears at 1 has no earlier sample to rise from).
import { Registry, Counter, Histogram, Gauge, collectDefaultMetrics } from 'prom-client'

export interface Metrics {
  registry: Registry
  decisions: Counter<'code' | 'reason'>
  decisionSeconds: Histogram<'code'>
  deadlineHits: Counter
  storeErrors: Counter<'op'>
  shed: Counter<'cause'>
  ruleHits: Counter<'rule' | 'mode'>
  conflicts: Counter
  compensationsPending: Gauge
  compensations: Counter<'outcome'>
  badRequests: Counter<'status'>
  controlDeclines: Counter<'control' | 'check'>
  deadlineSeconds: Gauge
  rulesInfo: Gauge<'version' | 'loaded_at'>
  rulesReloadFailures: Counter
  adapterCalls: Counter<'party' | 'call' | 'outcome'>
  adapterSeconds: Histogram<'party' | 'call'>
  replicationShortfalls: Counter
  /** time from a connection's accept to its first request: how long a new connection waited on a busy process */
  acceptToRequestSeconds: Histogram
}

/**
 * The response code of every decision reason that has one fixed code (rule and limit take the rule's code;
 * see noteRuleSet). The same table as the store's answers (docs: order of checks); a test keeps it complete.
 */
export const FIXED_DECISION_CODES: Readonly<Record<string, string>> = Object.freeze({
  approved: '00',
  unknown_urn: '14',
  customer_blocked: '05',
  customer_closed: '05',
  card_lost: '41',
  card_stolen: '43',
  card_blocked: '05',
  card_unknown: '14',
  insufficient_funds: '51',
  conflict: '05',
  deadline: '05',
  store_error: '05',
  standin_declined: '05'
})

/** The known label values of the other counters. */
export const KNOWN_LABELS = Object.freeze({
  storeOps: ['authorize'],
  // the causes @fastify/under-pressure is configured with (app.ts)
  shedCauses: ['eventLoopDelay', 'heapUsedBytes'],
  compensationOutcomes: ['released', 'tombstoned', 'untouched', 'dropped'],
  // the statuses the public route refuses with (http/external-auth-route.ts)
  rejectedStatuses: ['400', '401', '403'],
  adapterOutcomes: ['ok', 'declined', 'failed']
} as const)

export function createMetrics (opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'extauth_' })
  const registers = [registry]
  const m: Metrics = {
    registry,
    decisions: new Counter({ name: 'extauth_decisions_total', help: 'Answers of POST /api/v1/externalAuth by response code and reason', labelNames: ['code', 'reason'], registers }),
    decisionSeconds: new Histogram({
      name: 'extauth_decision_duration_seconds',
      help: 'Time from request arrival to the answer',
      labelNames: ['code'],
      // finer around the deadline (DECISION_DEADLINE_MS, 1.2 s by default) so a p99 near it reads true
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 2],
      registers
    }),
    deadlineSeconds: new Gauge({ name: 'extauth_decision_deadline_seconds', help: 'DECISION_DEADLINE_MS: no answer leaves later than this after arrival', registers }),
    deadlineHits: new Counter({ name: 'extauth_deadline_hits_total', help: 'Answers given as 05 by the deadline guard', registers }),
    storeErrors: new Counter({ name: 'extauth_store_errors_total', help: 'Store operations that failed', labelNames: ['op'], registers }),
    shed: new Counter({ name: 'extauth_shed_total', help: 'Requests answered 05 without a decision because the process was overloaded', labelNames: ['cause'], registers }),
    ruleHits: new Counter({ name: 'extauth_rule_hits_total', help: 'Decisions decided by a rule (enforce) or that a rule would have declined (shadow)', labelNames: ['rule', 'mode'], registers }),
    conflicts: new Counter({ name: 'extauth_reference_conflicts_total', help: 'Requests reusing a decided reference with another amount or card', registers }),
    compensationsPending: new Gauge({ name: 'extauth_compensations_pending', help: 'Deadline compensations waiting for the store', registers }),
    compensations: new Counter({ name: 'extauth_compensations_total', help: 'Deadline compensations by outcome', labelNames: ['outcome'], registers }),
    badRequests: new Counter({ name: 'extauth_rejected_requests_total', help: 'Public requests refused before a decision, by HTTP status', labelNames: ['status'], registers }),
    controlDeclines: new Counter({ name: 'extauth_control_declines_total', help: 'Decisions declined by a card control, by control and check (enabled, perTransactionMax, dailyMax)', labelNames: ['control', 'check'], registers }),
    rulesInfo: new Gauge({ name: 'extauth_rules_info', help: 'The running rule set: 1 for its version and the time it was loaded (ISO 8601)', labelNames: ['version', 'loaded_at'], registers }),
    rulesReloadFailures: new Counter({ name: 'extauth_rules_reload_failures_total', help: 'Rule sets refused on a reload (the running set was kept)', registers }),
    adapterCalls: new Counter({ name: 'extauth_adapter_calls_total', help: 'Calls to the outbound parties by party, call and outcome', labelNames: ['party', 'call', 'outcome'], registers }),
    adapterSeconds: new Histogram({
      name: 'extauth_adapter_call_duration_seconds',
      help: 'Time of a call to an outbound party, from start to parsed answer, retries included',
      labelNames: ['party', 'call'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 5, 10],
      registers
    }),
    replicationShortfalls: new Counter({ name: 'extauth_approvals_not_replicated_total', help: 'Approvals released and answered 05 because fewer than REDIS_WAIT_REPLICAS replicas confirmed them in time', registers }),
    acceptToRequestSeconds: new Histogram({
      name: 'extauth_connection_accept_to_request_seconds',
      help: 'Time from accepting a public connection to the start of its first request (the deadline timer starts at the request; the kernel accept queue before this is not visible)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
      registers
    })
  }
  for (const [reason, code] of Object.entries(FIXED_DECISION_CODES)) m.decisions.inc({ code, reason }, 0)
  for (const op of KNOWN_LABELS.storeOps) m.storeErrors.inc({ op }, 0)
  for (const cause of KNOWN_LABELS.shedCauses) m.shed.inc({ cause }, 0)
  for (const outcome of KNOWN_LABELS.compensationOutcomes) m.compensations.inc({ outcome }, 0)
  for (const status of KNOWN_LABELS.rejectedStatuses) m.badRequests.inc({ status }, 0)
  return m
}

export interface RuleSetNote {
  version: string
  loadedAtMs: number
  rules: readonly unknown[]
}

/** A new running rule set: its info series, and zero series for its rules' hits and decision codes. */
export function noteRuleSet (m: Metrics, set: RuleSetNote): void {
  m.rulesInfo.reset()
  m.rulesInfo.set({ version: set.version, loaded_at: new Date(set.loadedAtMs).toISOString() }, 1)
  for (const raw of set.rules) {
    const r = raw as { id?: unknown, mode?: unknown, limit?: unknown, then?: { decline?: unknown } }
    if (typeof r.id !== 'string') continue
    m.ruleHits.inc({ rule: r.id, mode: r.mode === 'shadow' ? 'shadow' : 'enforce' }, 0)
    const code = r.then?.decline
    if (typeof code === 'string' && r.mode !== 'shadow') m.decisions.inc({ code, reason: r.limit === undefined ? 'rule' : 'limit' }, 0)
  }
}

/** Zero series for the calls a configured party makes. */
export function noteAdapterCalls (m: Metrics, party: string, calls: readonly string[]): void {
  for (const call of calls) {
    for (const outcome of KNOWN_LABELS.adapterOutcomes) m.adapterCalls.inc({ party, call, outcome }, 0)
  }
}

export function observeAdapterCall (m: Metrics, c: { party: string, call: string, outcome: string, seconds: number }): void {
  m.adapterCalls.inc({ party: c.party, call: c.call, outcome: c.outcome })
  m.adapterSeconds.observe({ party: c.party, call: c.call }, c.seconds)
}

export interface HealthProbe {
  /** the Redis store answers; absent on the embedded store, which has no Redis to lose */
  redisUp?: () => boolean
  /** what GET /health/ready would answer, but for overload (counted by extauth_shed_total) */
  ready: () => boolean
}

/** Gauges read at scrape time: Redis up, ready. */
export function watchHealth (m: Metrics, probe: HealthProbe): void {
  const registers = [m.registry]
  const redisUp = probe.redisUp
  if (redisUp !== undefined) {
    // eslint-disable-next-line no-new -- a gauge registers itself in `registers`: nothing else needs to hold it
    new Gauge({ name: 'extauth_redis_up', help: '1 when the Redis store answers, 0 when it does not', registers, collect () { this.set(redisUp() ? 1 : 0) } })
  }
  // eslint-disable-next-line no-new -- the same
  new Gauge({ name: 'extauth_ready', help: '1 when the instance is ready (store answers, rules loaded, not stopping), 0 when not', registers, collect () { this.set(probe.ready() ? 1 : 0) } })
}
