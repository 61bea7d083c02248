// The stand-in's metrics, on the app's registry (deploy/prometheus/extauth-alerts.yml alerts on them).
import { Counter, Gauge, type Registry } from 'prom-client'

export interface StandInMetrics {
  active: Gauge
  forced: Gauge
  decisions: Counter<'code' | 'reason'>
  approvedAmount: Counter
  replayBacklog: Gauge
  replayBacklogAmount: Gauge
  replayed: Counter<'outcome'>
  negativeBalances: Counter
  journalFailures: Counter
}

export const REPLAY_OUTCOMES = ['applied', 'existing', 'existing_decline', 'conflict', 'unknown_urn', 'unconfirmed'] as const
export type ReplayOutcome = typeof REPLAY_OUTCOMES[number]

function one<T> (registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make()
}

export function standInMetrics (registry: Registry): StandInMetrics {
  const registers = [registry]
  const m: StandInMetrics = {
    active: one(registry, 'extauth_standin_active', () => new Gauge({ name: 'extauth_standin_active', help: '1 while this instance decides in stand-in (store unreachable, or forced on)', registers })),
    forced: one(registry, 'extauth_standin_forced', () => new Gauge({ name: 'extauth_standin_forced', help: 'Stand-in forced by an operator: 1 on, -1 off, 0 not forced', registers })),
    decisions: one(registry, 'extauth_standin_decisions_total', () => new Counter({ name: 'extauth_standin_decisions_total', help: 'Decisions made in stand-in, by response code and reason (approved, rule, or the policy check or cap that declined)', labelNames: ['code', 'reason'], registers })),
    approvedAmount: one(registry, 'extauth_standin_approved_amount_total', () => new Counter({ name: 'extauth_standin_approved_amount_total', help: 'Debit amount approved in stand-in, minor units', registers })),
    replayBacklog: one(registry, 'extauth_standin_replay_backlog', () => new Gauge({ name: 'extauth_standin_replay_backlog', help: 'Stand-in approvals of this instance not yet replayed into the store', registers })),
    replayBacklogAmount: one(registry, 'extauth_standin_replay_backlog_amount', () => new Gauge({ name: 'extauth_standin_replay_backlog_amount', help: 'Debit amount of the stand-in approvals not yet replayed, minor units', registers })),
    replayed: one(registry, 'extauth_standin_replayed_total', () => new Counter({ name: 'extauth_standin_replayed_total', help: 'Stand-in approvals replayed into the store, by outcome (applied; existing: the store held this approval already; existing_decline: the store held another answer for the reference; conflict: the store held the reference for another amount or card; unknown_urn; unconfirmed: still owed 6 days after it was approved, when the store may have forgotten an earlier replay of it: handed to the exception queue instead)', labelNames: ['outcome'], registers })),
    negativeBalances: one(registry, 'extauth_standin_negative_balances_total', () => new Counter({ name: 'extauth_standin_negative_balances_total', help: 'Stand-in replays that left a balance below zero', registers })),
    journalFailures: one(registry, 'extauth_standin_journal_failures_total', () => new Counter({ name: 'extauth_standin_journal_failures_total', help: 'Stand-in approvals declined because the journal could not be written', registers }))
  }
  for (const outcome of REPLAY_OUTCOMES) m.replayed.inc({ outcome }, 0)
  m.decisions.inc({ code: '00', reason: 'approved' }, 0)
  return m
}
