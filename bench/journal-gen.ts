// A seeded journal of plausible traffic for the backtest benchmark: customers with one card each, a channel
// and merchant mix with some gambling, ATM runs and cross-border spending, card controls with daily limits.
// Each entry's recorded answer is what the given rule set decides for it (a replay labels the traffic), with
// a share of transactions marked as having met insufficient funds.
import { createWriteStream } from 'node:fs'
import { once } from 'node:events'
import type { JournalEntry } from '../src/domain/journal.js'
import type { AuthRequest } from '../src/domain/request.js'
import { buildFacts } from '../src/rules/facts.js'
import type { CompiledRuleSet } from '../src/rules/types.js'
import { Replayer } from '../src/backtest/replay.js'

export interface JournalGenOptions {
  seed: number
  count: number
  startMs: number
  /** mean gap between arrivals */
  gapMs: number
  customers: number
  rules: CompiledRuleSet
  timezone: string
}

/** A small, fast, seeded generator (mulberry32). */
export function rng (seed: number): (n: number) => number {
  let a = seed >>> 0
  return (n: number): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n)
  }
}

const MCCS = ['5411', '5411', '5999', '5812', '4111', '5732', '6011', '7995', '7801', '6051', '4829']
const CHANNELS = ['POS', 'POS', 'POS', 'ECOM', 'ECOM', 'POS-Contactless', 'ATM', 'ATM']

export function * journalEntries (o: JournalGenOptions): Generator<JournalEntry> {
  const rnd = rng(o.seed)
  const replay = new Replayer(o.rules, { timezone: o.timezone })
  let at = o.startMs
  for (let i = 0; i < o.count; i++) {
    at += rnd(2 * o.gapMs + 1)
    const c = rnd(o.customers)
    const urn = `URN${String(c).padStart(7, '0')}`
    const last4 = String(1000 + (c % 9000))
    const channel = CHANNELS[rnd(CHANNELS.length)] as string
    const amount = channel === 'ATM' ? 100_000 * (1 + rnd(20)) : 100 + rnd(channel === 'ECOM' ? 2_000_000 : 500_000)
    const request: Record<string, string> = {
      urn, customerId: `C${c}`, merchantName: 'SHOP', terminalId: `T${rnd(500)}`, mcc: MCCS[rnd(MCCS.length)] as string,
      systemTraceAuditNumber: String(i % 1_000_000), cardNetwork: 'RUPAY', channel, merchantId: `M${rnd(2000)}`,
      transactionAmount: String(amount), transactionReferenceNumber: `TRN${String(i).padStart(9, '0')}`, currencyCode: '356', last4Digits: last4
    }
    if (rnd(10) === 0) { request.billingCurrency = '840'; request.billingAmount = String(Math.max(1, Math.floor(amount / 80))) }
    const debit = Number(request.billingAmount ?? request.transactionAmount)
    const controls: NonNullable<JournalEntry['controls']> = {
      [channel]: { enabled: !(channel === 'ECOM' && c % 50 === 0), perTransactionMax: null, dailyMax: channel === 'ATM' ? 4_000_000 : null }
    }
    if (request.billingCurrency !== undefined) controls.international = { enabled: c % 7 !== 0, perTransactionMax: null, dailyMax: 1_000_000 }
    const blocked = c % 997 === 0
    const arrivedAt = new Date(at).toISOString()
    const e: JournalEntry = {
      v: 1, urn, reference: request.transactionReferenceNumber as string, last4, request, arrivedAt, decidedAt: arrivedAt,
      code: '00', reason: rnd(50) === 0 ? 'insufficient_funds' : 'approved', ruleId: null, control: null, limit: null,
      availableSeen: null, debit, shadowHits: [], rulesVersion: o.rules.version, controls,
      customerStatus: blocked ? 'BLOCKED' : 'ACTIVE', cardStatus: 'ACTIVE', answeredOnDeadline: false
    }
    const facts = buildFacts(request as unknown as AuthRequest, { nowMs: at, timezone: o.timezone, risk: null })
    const out = replay.decide(e, facts, at)
    e.code = out.code
    e.reason = out.reason
    e.ruleId = out.ruleId
    e.limit = out.limit
    e.shadowHits = out.hits.filter(h => h !== out.ruleId)
    if (out.control !== null) e.control = { kind: out.control, check: out.reason === 'control_off' ? 'enabled' : 'dailyMax', limit: null, totalBefore: null, debit }
    if (out.reason === 'insufficient_funds') e.availableSeen = 0
    yield e
  }
}

/** Writes the journal as NDJSON, waiting for the file to drain. */
export async function writeJournal (file: string, o: JournalGenOptions): Promise<void> {
  const out = createWriteStream(file)
  let batch = ''
  let n = 0
  for (const e of journalEntries(o)) {
    batch += JSON.stringify(e) + '\n'
    if (++n % 1000 === 0) {
      if (!out.write(batch)) await once(out, 'drain')
      batch = ''
    }
  }
  out.end(batch)
  await once(out, 'finish')
}
