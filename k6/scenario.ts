// The load scenario shared by k6/load.ts and scripts/load.ts (and the request mix of bench/bench.ts): which
// customers exist, how they are seeded through the admin API, and which body the n-th request sends.
// Plain TypeScript with no k6 or Node API, so both runtimes import it.
//
// Mix: every `declineEvery`-th request goes to a customer that must be declined, in turn
//   - a BLOCKED customer        → 05
//   - an unknown urn            → 14
//   - a gambling MCC (7995) on a funded customer → 05 by the shipped rule block-gambling
// (with a rules/ that lacks block-gambling, the third kind is approved: expect a lower ratio)
// and every other request spends a small amount of a funded customer, which is approved. So the expected
// decline ratio is 1/declineEvery; deadline or overload answers (05) push the measured ratio above the band.

export interface Scenario {
  /** short base-36 tag, unique per run: in every urn and reference so runs never replay each other */
  runId: string
  /** funded customers */
  urns: number
  /** every n-th request is meant to be declined; 0 = none */
  declineEvery: number
  /** minor units credited to each funded customer */
  creditMinor: number
}

export interface PlatformKeys {
  consumerKey: string
  clientId: string
  bankId: string
}

export interface AdminCall {
  method: 'PUT' | 'POST'
  path: string
  body: Record<string, unknown>
}

export interface PlannedRequest {
  body: Record<string, string>
  /** what this request is meant to get: '00' or the decline code */
  expectCode: string
}

export const CARD_LAST4 = '4321'
export const AUTH_PATH = '/api/v1/externalAuth'
export const DEFAULT_CREDIT_MINOR = 1_000_000_000
const CHANNELS = ['POS', 'ECOM', 'POS-Contactless'] as const

/** A run id of 8 base-36 characters: milliseconds since 2020, enough to tell runs apart. */
export function newRunId (nowMs: number, salt: number): string {
  const t = Math.max(0, nowMs - Date.UTC(2020, 0, 1))
  return ((t * 37 + (salt % 37)) % 36 ** 8).toString(36).padStart(8, '0')
}

// urns are at most 20 characters: L + 8 + kind + base-36 index
export const fundedUrn = (s: Scenario, i: number): string => `L${s.runId}F${i.toString(36)}`
export const blockedUrn = (s: Scenario): string => `L${s.runId}B`
export const unknownUrn = (s: Scenario): string => `L${s.runId}U`

export function expectedDeclineRatio (s: Scenario): number {
  return s.declineEvery > 0 ? 1 / s.declineEvery : 0
}

/** The admin calls that create the customers, grouped per customer (each group in order). */
export function seedPlan (s: Scenario): AdminCall[][] {
  const groups: AdminCall[][] = []
  for (let i = 0; i < s.urns; i++) {
    const urn = fundedUrn(s, i)
    groups.push([
      { method: 'PUT', path: `/admin/v1/customers/${urn}`, body: { customerId: `C-${urn}` } },
      { method: 'PUT', path: `/admin/v1/customers/${urn}/cards/${CARD_LAST4}`, body: { status: 'ACTIVE' } },
      { method: 'POST', path: `/admin/v1/customers/${urn}/credits`, body: { amount: String(s.creditMinor), reference: `seed-${urn}` } }
    ])
  }
  if (s.declineEvery > 0) {
    const urn = blockedUrn(s)
    groups.push([{ method: 'PUT', path: `/admin/v1/customers/${urn}`, body: { customerId: `C-${urn}`, status: 'BLOCKED' } }])
  }
  return groups
}

/** Knuth's multiplicative hash spreads consecutive requests over the customers. */
function spread (seq: number, n: number): number {
  return (Math.imul(seq, 2654435761) >>> 0) % n
}

/** The body of the seq-th request (seq counts from 0 and is unique within the run). */
export function planRequest (s: Scenario, seq: number): PlannedRequest {
  let urn = fundedUrn(s, spread(seq, s.urns))
  let mcc = '5411'
  let expectCode = '00'
  if (s.declineEvery > 0 && seq % s.declineEvery === s.declineEvery - 1) {
    const kind = Math.floor(seq / s.declineEvery) % 3
    if (kind === 0) { urn = blockedUrn(s); expectCode = '05' }
    if (kind === 1) { urn = unknownUrn(s); expectCode = '14' }
    if (kind === 2) { mcc = '7995'; expectCode = '05' }
  }
  return {
    expectCode,
    body: {
      urn,
      customerId: `C-${urn}`,
      merchantName: 'Load Test Store',
      terminalId: `T${(seq % 97).toString().padStart(4, '0')}`,
      mcc,
      systemTraceAuditNumber: String(seq % 1_000_000),
      cardNetwork: 'RUPAY',
      channel: CHANNELS[seq % CHANNELS.length] as string,
      merchantId: 'M-LOAD-1',
      transactionAmount: String(100 + (seq * 7919) % 4900),
      transactionReferenceNumber: `${s.runId}-${seq}`,
      currencyCode: '356',
      last4Digits: CARD_LAST4
    }
  }
}

export function platformHeaders (k: PlatformKeys): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-consumer-custom-id': k.consumerKey,
    clientid: k.clientId,
    bankid: k.bankId
  }
}

/** Pass/fail limits, the same for k6/load.ts and scripts/load.ts. */
export interface Limits {
  p99Ms: number
  /** the measured decline ratio must be within expected ± band */
  declineBand: number
  /** answers slower than this (client-measured) are counted; any fails the run */
  deadlineMs: number
}

export const DEFAULT_LIMITS: Limits = { p99Ms: 250, declineBand: 0.02, deadlineMs: 1200 }

/**
 * Seconds of warm-up before the measured part, by default: a process that has just started serves its first
 * seconds slower while its code is being compiled, which is not its steady state. Both tools send the warm-up's
 * requests at the same rate and check their answers, but hold only the measured part to the p99 and drop limits.
 */
export const DEFAULT_WARMUP_S = 5

/** A duration as the tools take it (`10`, `10s`, `500ms`, `2m`) in seconds; null when it is not one. */
export function durationSeconds (raw: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(raw.trim())
  if (m === null) return null
  return Number(m[1]) * (m[2] === 'ms' ? 0.001 : m[2] === 'm' ? 60 : 1)
}
