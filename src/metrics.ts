// Prometheus metrics, on a registry of the app's own (tests build several apps in one process).
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
  replicationShortfalls: Counter
  /** time from a connection's accept to its first request: how long a new connection waited on a busy process */
  acceptToRequestSeconds: Histogram
}

export function createMetrics (opts: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry()
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'extauth_' })
  const registers = [registry]
  return {
    registry,
    decisions: new Counter({ name: 'extauth_decisions_total', help: 'Answers of POST /api/v1/externalAuth by response code and reason', labelNames: ['code', 'reason'], registers }),
    decisionSeconds: new Histogram({
      name: 'extauth_decision_duration_seconds',
      help: 'Time from request arrival to the answer',
      labelNames: ['code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2],
      registers
    }),
    deadlineHits: new Counter({ name: 'extauth_deadline_hits_total', help: 'Answers given as 05 by the deadline guard', registers }),
    storeErrors: new Counter({ name: 'extauth_store_errors_total', help: 'Store operations that failed', labelNames: ['op'], registers }),
    shed: new Counter({ name: 'extauth_shed_total', help: 'Requests answered 05 without a decision because the process was overloaded', labelNames: ['cause'], registers }),
    ruleHits: new Counter({ name: 'extauth_rule_hits_total', help: 'Decisions decided by a rule (enforce) or that a rule would have declined (shadow)', labelNames: ['rule', 'mode'], registers }),
    conflicts: new Counter({ name: 'extauth_reference_conflicts_total', help: 'Requests reusing a decided reference with another amount or card', registers }),
    compensationsPending: new Gauge({ name: 'extauth_compensations_pending', help: 'Deadline compensations waiting for the store', registers }),
    compensations: new Counter({ name: 'extauth_compensations_total', help: 'Deadline compensations by outcome', labelNames: ['outcome'], registers }),
    badRequests: new Counter({ name: 'extauth_rejected_requests_total', help: 'Public requests refused before a decision, by HTTP status', labelNames: ['status'], registers }),
    replicationShortfalls: new Counter({ name: 'extauth_approvals_not_replicated_total', help: 'Approvals released and answered 05 because fewer than REDIS_WAIT_REPLICAS replicas confirmed them in time', registers }),
    acceptToRequestSeconds: new Histogram({
      name: 'extauth_connection_accept_to_request_seconds',
      help: 'Time from accepting a public connection to the start of its first request (the deadline timer starts at the request; the kernel accept queue before this is not visible)',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
      registers
    })
  }
}
