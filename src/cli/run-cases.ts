// Runs test cases through the real decision pipeline on a fresh in-memory store per case, so an operator
// sees what the service would answer (state checks, rules, limits, funds) before shipping a rule change.
// It sits beside the rules because it is their test tool; it is the one place here that reaches the pipeline.
import { decide } from '../decision/pipeline.js'
import { InFlight } from '../decision/deadline.js'
import type { AuthRequest, ResponseCode } from '../domain/request.js'
import { MemoryStore } from '../store/memory.js'
import { DEFAULT_CASE_REQUEST, type CasesFile, type CaseCustomer, type TestCase } from './cases-file.js'
import type { CompiledRuleSet } from '../rules/types.js'
import { parseWindow } from '../rules/window.js'
import { withoutEmptyOptionals } from '../domain/auth-request-schema.js'

export interface CaseResult {
  name: string
  ok: boolean
  expected: ResponseCode
  expectedRuleId: string | null
  code: ResponseCode
  reason: string
  ruleId: string | null
  shadowHits: string[]
  /** approved / total of the prior transactions, to tell a wrong setup from a wrong rule */
  priorApproved: number
  priorTotal: number
}

export interface RunCasesOptions {
  rules: CompiledRuleSet
  timezone: string
  defaultCurrency?: string
  /** the instant of cases without `now` when the file has none either */
  nowMs?: number
}

export { DEFAULT_CASE_REQUEST }

/** 1,00,000.00 in minor units: enough that funds decide a case only when the case says so. */
export const DEFAULT_CASE_BALANCE = 10_000_000

/** A deadline far enough that a slow machine never turns a case into a deadline 05. */
const CASE_DEADLINE_MS = 60_000

function agoMs (ago: string | undefined): number {
  const w = parseWindow(ago ?? '1m')
  if ('error' in w || w.kind !== 'rolling') throw new Error(`bad "ago": ${String(ago)}`)
  return w.lengthMs
}

async function setUp (store: MemoryStore, urn: string, customer: CaseCustomer): Promise<void> {
  await store.putCustomer(urn, customer.status === undefined ? {} : { status: customer.status })
  for (const [last4, status] of Object.entries(customer.cards ?? {})) await store.putCard(urn, last4, status)
  const balance = customer.balance ?? DEFAULT_CASE_BALANCE
  if (balance > 0) await store.credit(urn, balance, 'case-opening-balance')
}

async function runCase (c: TestCase, index: number, file: CasesFile, opts: RunCasesOptions, fallbackNowMs: number): Promise<CaseResult> {
  const nowMs = c.now !== undefined ? Date.parse(c.now) : file.now !== undefined ? Date.parse(file.now) : fallbackNowMs
  let clockMs = nowMs
  const store = new MemoryStore({ clock: () => clockMs })
  const deps = { store, rules: () => opts.rules, timezone: opts.timezone, defaultCurrency: opts.defaultCurrency, clock: () => clockMs }
  const base = { ...DEFAULT_CASE_REQUEST, ...file.defaults?.request, ...c.request }
  const urn = base.urn as string

  const customer = c.customer === undefined ? { ...file.defaults?.customer } : c.customer
  if (customer !== null) await setUp(store, urn, customer)

  const run = async (req: AuthRequest, atMs: number): Promise<Awaited<ReturnType<typeof decide>>> => {
    clockMs = atMs
    // one request in flight each, as at the endpoint; no deadline comes in a case
    const deadlineAtMs = atMs + CASE_DEADLINE_MS
    // as the endpoint reads it: an optional field sent as "" is absent
    return await decide(withoutEmptyOptionals(req), { arrivedAtMs: atMs, deadlineAtMs, abort: new InFlight(deadlineAtMs) }, deps)
  }

  // Oldest first, as they happened; each its own reference so none is taken for a replay.
  const priors = (c.prior ?? []).map((p, i) => ({ p, i, at: nowMs - agoMs(p.ago) })).sort((a, b) => a.at - b.at)
  let priorApproved = 0
  let priorTotal = 0
  for (const { p, i, at } of priors) {
    for (let k = 0; k < (p.count ?? 1); k++) {
      const req = { ...base, ...p.request, transactionReferenceNumber: `case-${index}-prior-${i}-${k}` } as AuthRequest
      const d = await run(req, at + k)
      priorTotal++
      if (d.code === '00') priorApproved++
    }
  }

  const req = { ...base, transactionReferenceNumber: base.transactionReferenceNumber ?? `case-${index}` } as AuthRequest
  const d = await run(req, nowMs)
  const expectedRuleId = c.expectRuleId ?? null
  return {
    name: c.name,
    ok: d.code === c.expect && (expectedRuleId === null || d.ruleId === expectedRuleId),
    expected: c.expect,
    expectedRuleId,
    code: d.code,
    reason: d.reason,
    ruleId: d.ruleId,
    shadowHits: d.shadowHits,
    priorApproved,
    priorTotal
  }
}

export async function runCases (file: CasesFile, opts: RunCasesOptions): Promise<CaseResult[]> {
  const fallbackNowMs = opts.nowMs ?? Date.now()
  const out: CaseResult[] = []
  for (const [i, c] of file.cases.entries()) out.push(await runCase(c, i, file, opts, fallbackNowMs))
  return out
}
