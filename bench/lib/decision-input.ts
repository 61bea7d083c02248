// The decision the part benches send the store (bench/script-cost.ts, bench/lib/store-worker.ts): a plain
// approval of a known customer's card at a point of sale, its request as the load scenario's (k6/scenario.ts),
// no rule matched.
import type { AuthorizeInput } from '../../src/store/types.js'
import type { ControlsInput } from '../../src/domain/controls.js'
import type { LimitCheck } from '../../src/domain/rule-hits.js'
import { fingerprintOf } from '../../src/decision/pipeline.js'
import { CARD_LAST4 } from '../../k6/scenario.js'

/** the channel's card control, as the bench's requests have: on, no limits */
export const CHANNEL_CONTROL: ControlsInput = { defaults: [{ kind: 'POS', enabled: true, perTransactionMax: null, dailyMax: null }], day: '20261124' }

/**
 * The shipped ATM rules' two limits (rules/20-atm.json: an amount per customer and a count per card, each a
 * day), their maxima out of reach so that every call is an approval that enters both windows
 */
export function atmLimits (nowMs: number): LimitCheck[] {
  const day = 86_400_000
  const common = { mode: 'enforce', windowStartMs: nowMs - day, retainMs: day, max: Number.MAX_SAFE_INTEGER, code: '61', values: {} } as const
  return [
    { ...common, ruleId: 'atm-daily-amount', measure: 'amount', per: 'urn' },
    { ...common, ruleId: 'atm-daily-count', measure: 'count', per: 'card', code: '65' }
  ]
}

export function approvalInput (o: { urn: string, reference: string, attempt: string, debitAmount: number, deadlineInMs: number, controls?: ControlsInput, limits?: LimitCheck[] }): AuthorizeInput {
  const { urn, reference, debitAmount } = o
  const amount = String(debitAmount)
  const nowMs = Date.now()
  const request = {
    customerId: `C-${urn}`, urn, merchantName: 'Load Test Store', terminalId: 'T0001', mcc: '5411', systemTraceAuditNumber: '1',
    cardNetwork: 'RUPAY', channel: 'POS', merchantId: 'M-LOAD-1', transactionAmount: amount, transactionReferenceNumber: reference,
    currencyCode: '356', last4Digits: CARD_LAST4
  }
  return {
    urn, reference, last4: CARD_LAST4, debitAmount, fingerprint: fingerprintOf(debitAmount, CARD_LAST4), attempt: o.attempt,
    nowMs, deadlineAtMs: nowMs + o.deadlineInMs, decline: null, limits: o.limits ?? [],
    ...(o.controls !== undefined ? { controls: o.controls } : {}),
    meta: { rulesVersion: '0e20ab44356b', shadowHits: [], transactionAmount: amount, currencyCode: '356', channel: 'POS', request }
  }
}
