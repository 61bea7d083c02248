// One log line per adapter call with the outcome and the references needed to trace it, and nothing else:
// request and response bodies carry card data, OTPs and tokens, so they are never passed to the logger.
import type { Logger } from 'pino'
import type { Answer, Failed } from './result.js'

type Outcome = Answer | Failed

export function logOutcome (log: Logger, op: string, refs: Record<string, string | undefined>, r: Outcome, started: number): void {
  const ms = Math.round(performance.now() - started)
  if (r.kind === 'ok') {
    log.info({ op, ...refs, outcome: 'ok', ms }, `${op} ok`)
  } else if (r.kind === 'declined') {
    log.info({ op, ...refs, outcome: 'declined', code: r.code, family: r.family, ms }, `${op} declined`)
  } else {
    log.warn({ op, ...refs, outcome: 'failed', reason: r.reason, retryable: r.retryable, sent: r.sent, attempts: r.attempts, detail: r.detail, ms }, `${op} failed`)
  }
}
