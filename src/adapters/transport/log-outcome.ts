// One log line per adapter call with the outcome and the references needed to trace it, and nothing else:
// request and response bodies carry card data, OTPs and tokens, so they are never passed to the logger.
import type { Logger } from 'pino'
import type { AdapterCall, AdapterDeps } from './options.js'
import type { Answer, Failed } from './result.js'

type Outcome = Answer | Failed

export type CallObserver = (call: string, outcome: AdapterCall['outcome'], seconds: number) => void

/** The party's observer of finished calls; a throwing observer must not turn a good answer into an error. */
export function callObserver (party: string, deps: AdapterDeps): CallObserver | undefined {
  const onCall = deps.onCall
  if (onCall === undefined) return undefined
  return (call, outcome, seconds) => {
    try { onCall({ party, call, outcome, seconds }) } catch { /* metrics only */ }
  }
}

export function logOutcome (log: Logger, op: string, refs: Record<string, string | undefined>, r: Outcome, started: number, observe?: CallObserver): void {
  const elapsed = performance.now() - started
  observe?.(op, r.kind === 'ok' ? 'ok' : r.kind === 'declined' ? 'declined' : 'failed', elapsed / 1000)
  const ms = Math.round(elapsed)
  if (r.kind === 'ok') {
    log.info({ op, ...refs, outcome: 'ok', ms }, `${op} ok`)
  } else if (r.kind === 'declined') {
    log.info({ op, ...refs, outcome: 'declined', code: r.code, family: r.family, ms }, `${op} declined`)
  } else {
    log.warn({ op, ...refs, outcome: 'failed', reason: r.reason, retryable: r.retryable, sent: r.sent, attempts: r.attempts, detail: r.detail, ms }, `${op} failed`)
  }
}
