// Backtests of three rule changes on a generated traffic mix, each change's expected effect worked out here
// from the traffic alone (not by the replay): a count limit raised, an MCC rule removed, an amount rule added.
// The recorded answers come from the same independent model of the default rules, so the baseline replay must
// reproduce every one of them.
import t from 'tap'
import { moneyWords } from '../../src/backtest/money-words.js'
import { join } from 'node:path'
import type { JournalEntry } from '../../src/domain/journal.js'
import { runBacktest } from '../../src/backtest/engine.js'
import { loadRuleSet } from '../../src/rules/load.js'
import type { CompiledRuleSet } from '../../src/rules/types.js'
import { main } from '../../src/cli/main.js'
import { defaultRulesDir, editedRules, entry, memorySource, tempDir, writeNdjson, rng } from './helpers.js'

const TZ = 'Asia/Kolkata'
const OFFSET_MS = 5.5 * 3600_000
const HOUR = 3600_000
/** 2026-11-10 00:00 in Kolkata */
const DAY0 = Date.UTC(2026, 10, 10) - OFFSET_MS
const DAYS = 6
const GAMBLING = new Set(['7995', '7800', '7801', '7802'])

const localDay = (ms: number): string => new Date(ms + OFFSET_MS).toISOString().slice(0, 10)

interface Txn { at: number, urn: string, last4: string, channel: string, mcc: string, debit: number, blocked: boolean, lowFunds: boolean, ref: string }

/** The traffic: per customer and day an ATM run of 0-9 withdrawals and a handful of POS and ECOM payments. */
function traffic (seed: number): Txn[] {
  const rnd = rng(seed)
  const out: Txn[] = []
  for (let c = 0; c < 14; c++) {
    const urn = `URN${String(c).padStart(3, '0')}`
    const last4 = String(4000 + c)
    const blocked = c === 13
    for (let d = 0; d < DAYS; d++) {
      const dayStart = DAY0 + d * 24 * HOUR
      const atm = rnd(10)
      for (let k = 0; k < atm; k++) {
        out.push({ at: dayStart + rnd(24 * HOUR), urn, last4, channel: 'ATM', mcc: '6011', debit: 1000 + rnd(4000), blocked, lowFunds: false, ref: '' })
      }
      const pays = 2 + rnd(6)
      for (let k = 0; k < pays; k++) {
        const channel = rnd(4) === 0 ? 'ECOM' : 'POS'
        const mcc = ['5411', '5999', '7995', '7801', '5812', '7802'][rnd(6)] as string
        out.push({ at: dayStart + rnd(24 * HOUR), urn, last4, channel, mcc, debit: 100 + rnd(900_000), blocked, lowFunds: rnd(12) === 0, ref: '' })
      }
    }
  }
  out.sort((a, b) => a.at - b.at)
  out.forEach((x, i) => { x.ref = `TRN${String(i).padStart(5, '0')}` })
  return out
}

interface Model { atmMax: number, gamblingBlocked: boolean, posAmountMax: number | null }

/**
 * What a rule set of this shape answers, transaction by transaction, in arrival order. Funds as recorded: only a
 * transaction the recording saw meet insufficient funds meets it again (`recorded`); one declined before the
 * funds were looked at is taken to have had them.
 */
function model (txns: readonly Txn[], m: Model, recorded?: ReadonlyArray<{ code: string }>): Array<{ code: string, reason: string, ruleId: string | null }> {
  const atmApprovals = new Map<string, number>()
  return txns.map((x, i) => {
    if (x.blocked) return { code: '05', reason: 'customer_blocked', ruleId: null }
    if (x.channel === 'ATM') {
      const key = `${x.last4}|${localDay(x.at)}`
      const n = atmApprovals.get(key) ?? 0
      if (n >= m.atmMax) return { code: '65', reason: 'limit', ruleId: 'atm-daily-count' }
      atmApprovals.set(key, n + 1)
      return { code: '00', reason: 'approved', ruleId: null }
    }
    if (m.gamblingBlocked && GAMBLING.has(x.mcc)) return { code: '05', reason: 'rule', ruleId: 'block-gambling' }
    if (m.posAmountMax !== null && x.channel === 'POS' && x.debit > m.posAmountMax) return { code: '05', reason: 'rule', ruleId: 'pos-amount' }
    if (x.lowFunds && (recorded === undefined || recorded[i]?.code === '51')) return { code: '51', reason: 'insufficient_funds', ruleId: null }
    return { code: '00', reason: 'approved', ruleId: null }
  })
}

const BASELINE: Model = { atmMax: 5, gamblingBlocked: true, posAmountMax: null }

function journal (txns: readonly Txn[], version: string): JournalEntry[] {
  const recorded = model(txns, BASELINE)
  return txns.map((x, i) => {
    const r = recorded[i] as { code: string, reason: string, ruleId: string | null }
    const request = {
      urn: x.urn, terminalId: 'T1', systemTraceAuditNumber: String(i), cardNetwork: 'RUPAY', channel: x.channel, mcc: x.mcc,
      transactionAmount: String(x.debit), transactionReferenceNumber: x.ref, currencyCode: '356', last4Digits: x.last4
    }
    return entry({
      request,
      arrivedAt: new Date(x.at).toISOString(),
      ...r,
      rulesVersion: version,
      customerStatus: x.blocked ? 'BLOCKED' : 'ACTIVE',
      controls: x.blocked ? null : { [x.channel]: { enabled: true, perTransactionMax: null, dailyMax: null } },
      availableSeen: r.code === '51' ? 0 : null
    })
  })
}

async function load (dir: string): Promise<CompiledRuleSet> {
  const r = await loadRuleSet(dir, { timezone: TZ })
  if (!r.ok) throw new Error(JSON.stringify(r.errors))
  return r.set
}

const txns = traffic(20261110)
const FROM = DAY0 + 2 * 24 * HOUR + 12 * HOUR
const TO = DAY0 + 5 * 24 * HOUR
const inRange = (x: Txn): boolean => x.at >= FROM && x.at < TO

/** Expected changes between the baseline model and a candidate model, from the models alone. */
function expected (candidate: Model): { toApproved: Txn[], toDeclined: Txn[] } {
  const b = model(txns, BASELINE)
  const c = model(txns, candidate, b)
  const toApproved: Txn[] = []
  const toDeclined: Txn[] = []
  txns.forEach((x, i) => {
    if (!inRange(x)) return
    const bc = (b[i] as { code: string }).code
    const cc = (c[i] as { code: string }).code
    if (bc !== '00' && cc === '00') toApproved.push(x)
    if (bc === '00' && cc !== '00') toDeclined.push(x)
  })
  return { toApproved, toDeclined }
}

const sum = (xs: readonly Txn[]): number => xs.reduce((n, x) => n + x.debit, 0)

t.test('the traffic mix exercises every change', async t => {
  t.ok(txns.filter(inRange).length > 200, 'enough traffic in range')
  t.ok(expected({ ...BASELINE, atmMax: 8 }).toApproved.length > 5)
  t.ok(expected({ ...BASELINE, gamblingBlocked: false }).toApproved.length > 20)
  t.ok(expected({ ...BASELINE, posAmountMax: 400_000 }).toDeclined.length > 20)
})

t.test('backtests of three changes, each against its independently computed effect', async t => {
  const baseline = await load(defaultRulesDir)
  const entries = journal(txns, baseline.version)
  const source = memorySource(entries)
  const run = async (candidate: CompiledRuleSet) =>
    (await runBacktest({ source, candidate, baseline, baselineMode: 'recorded', fromMs: FROM, toMs: TO, timezone: TZ, samplesMax: 1000 })).report

  const cases: Array<{ name: string, dir: string, model: Model, rule: string, in: string }> = [
    {
      name: 'ATM count limit raised from 5 to 8',
      dir: await editedRules(t, { '20-atm.json': s => s.replace('"max": 5 }', '"max": 8 }') }),
      model: { ...BASELINE, atmMax: 8 },
      rule: 'atm-daily-count',
      in: 'both'
    },
    {
      name: 'gambling MCC rule removed',
      dir: await editedRules(t, { '10-merchant.json': s => JSON.stringify({ rules: (JSON.parse(s) as { rules: Array<{ id: string }> }).rules.filter(r => r.id !== 'block-gambling') }) }),
      model: { ...BASELINE, gamblingBlocked: false },
      rule: 'block-gambling',
      in: 'baseline'
    },
    {
      name: 'new POS amount rule',
      dir: await editedRules(t, {
        '50-pos-amount.json': () => JSON.stringify({ rules: [{ id: 'pos-amount', when: { channel: { eq: 'POS' }, debitAmount: { gt: 400000 } }, then: { decline: '05' } }] })
      }),
      model: { ...BASELINE, posAmountMax: 400_000 },
      rule: 'pos-amount',
      in: 'candidate'
    }
  ]

  for (const c of cases) {
    const report = await run(await load(c.dir))
    const want = expected(c.model)
    t.equal(report.decisions, txns.filter(inRange).length, `${c.name}: every decision in range`)
    t.same(report.baseline.unreproduced, [], `${c.name}: the baseline reproduces every recorded decision`)
    t.equal(report.baseline.reproduced, report.decisions)
    t.same(report.changes, {
      approvedToDeclined: { count: want.toDeclined.length, amount: sum(want.toDeclined) },
      declinedToApproved: { count: want.toApproved.length, amount: sum(want.toApproved) }
    }, c.name)
    const row = report.rules.find(r => r.id === c.rule)
    t.equal(row?.in, c.in, `${c.name}: the rule is in the ${c.in} set`)
    t.same(row?.approvedToDeclined.samples, want.toDeclined.map(x => x.ref), `${c.name}: the changes to declined, for the rule that declines`)
    t.same(row?.declinedToApproved.samples, want.toApproved.map(x => x.ref), `${c.name}: the changes to approved, for the rule that declined`)
    const changedRefs = report.changed.filter(x => (x.from === '00') !== (x.to === '00')).map(x => x.reference)
    t.same(changedRefs, [...want.toApproved, ...want.toDeclined].sort((a, b) => a.at - b.at).map(x => x.ref), `${c.name}: the changed list`)
    // The monthly cross-border window reaches back to the 1st; the traffic starts on the 10th.
    t.same(report.warnings.map(w => [w.kind, w.from, w.to]), [['history', new Date(Date.UTC(2026, 10, 1) - OFFSET_MS).toISOString(), new Date(txns[0]?.at as number).toISOString()]], `${c.name}: the uncovered span`)
  }

  // The new rule's hits: every POS payment over 400000 it sees (gambling is declined before it, blocked customers
  // earlier still), including those that would have met insufficient funds.
  const report = await run(await load(cases[2]?.dir as string))
  const hits = txns.filter(x => inRange(x) && !x.blocked && x.channel === 'POS' && !GAMBLING.has(x.mcc) && x.debit > 400_000)
  t.equal(report.rules.find(r => r.id === 'pos-amount')?.hits, hits.length)
  t.ok(hits.some(x => x.lowFunds), 'some of them met insufficient funds: hits, not changes')
})

t.test('a journal that does not reach back as far as the windows: a warning with the span, and the reason', async t => {
  const baseline = await load(defaultRulesDir)
  const entries = journal(txns, baseline.version).filter(e => Date.parse(e.arrivedAt) >= FROM)
  const { report, warmFromMs } = await runBacktest({ source: memorySource(entries), candidate: baseline, baseline, baselineMode: 'recorded', fromMs: FROM, toMs: TO, timezone: TZ })
  // The month window (cross-border) reaches back furthest.
  t.equal(warmFromMs, Date.UTC(2026, 10, 1) - OFFSET_MS)
  t.equal(report.warnings.length, 1)
  t.match(report.warnings[0], { kind: 'history', from: new Date(warmFromMs).toISOString(), to: entries[0]?.arrivedAt })
  // ATM withdrawals of the morning before FROM are missing: some afternoon ones pass the count limit in the replay.
  t.ok(report.baseline.unreproduced.length > 0, 'some decisions depended on the missing history')
  for (const u of report.baseline.unreproduced) {
    t.match(u, { recorded: '65', replayed: '00', reason: /^history not covered: / })
  }
  t.equal(report.baseline.reproduced + report.baseline.unreproduced.length, report.decisions, 'none is dropped')
})

t.test('rules versions not at hand are reported, never dropped; --baseline replays them all', async t => {
  const baseline = await load(defaultRulesDir)
  const entries = journal(txns, baseline.version)
  const old = entries.filter((_, i) => i % 10 === 0).map(e => e.reference)
  for (const e of entries) if (old.includes(e.reference)) e.rulesVersion = 'aaaaaaaaaaaa'
  const r1 = (await runBacktest({ source: memorySource(entries), candidate: baseline, baseline, baselineMode: 'recorded', fromMs: FROM, toMs: TO, timezone: TZ })).report
  const oldInRange = entries.filter(e => old.includes(e.reference) && Date.parse(e.arrivedAt) >= FROM && Date.parse(e.arrivedAt) < TO)
  t.same(r1.baseline.unreproduced.map(u => u.reference), oldInRange.map(e => e.reference))
  for (const u of r1.baseline.unreproduced) t.match(u.reason, /^rules version aaaaaaaaaaaa is not at hand/)
  t.equal(r1.baseline.reproduced, r1.decisions - oldInRange.length)
  t.same(r1.changes.approvedToDeclined.count + r1.changes.declinedToApproved.count, 0, 'kept as recorded, the same set changes nothing')

  const r2 = (await runBacktest({ source: memorySource(entries), candidate: baseline, baseline, baselineMode: 'given', fromMs: FROM, toMs: TO, timezone: TZ })).report
  t.same(r2.baseline.unreproduced, [], 'the given baseline answers them as recorded')
})

t.test('the command: --journal, human table, --json, --fail-on-change', async t => {
  const baseline = await load(defaultRulesDir)
  const dir = await tempDir(t)
  const file = join(dir, 'journal.ndjson')
  await writeNdjson(file, journal(txns, baseline.version))
  const raised = await editedRules(t, { '20-atm.json': s => s.replace('"max": 5 }', '"max": 8 }') })
  const want = expected({ ...BASELINE, atmMax: 8 })
  const cli = async (args: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await main(['rules', 'backtest', '--from', new Date(FROM).toISOString(), '--to', new Date(TO).toISOString(), '--journal', file, '--timezone', TZ, ...args],
      { out: l => { out.push(l) }, err: l => { err.push(l) }, env: { RULES_DIR: defaultRulesDir } })
    return { code, out, err }
  }

  const same = await cli(['--rules', defaultRulesDir, '--fail-on-change'])
  t.equal(same.code, 0, 'no change: exit 0 even with --fail-on-change')
  const changed = await cli(['--rules', raised, '--fail-on-change'])
  t.equal(changed.code, 1, 'a change with --fail-on-change: exit 1')
  const plain = await cli(['--rules', raised])
  t.equal(plain.code, 0, 'a change without --fail-on-change: exit 0')
  t.ok(plain.out.includes(`changes: approved -> declined 0 (amount 0.00 INR), declined -> approved ${want.toApproved.length} (amount ${moneyWords(sum(want.toApproved), '356')})`), plain.out.join('\n'))
  t.ok(plain.out.some(l => /^atm-daily-count\s+both\s+\d+\s+0\s+0\.00 INR\s+\d+\s+[\d,]+\.\d\d INR\s+TRN\d+/.test(l)), 'a table row per rule, amounts in rupees')
  t.ok(plain.out.includes(`baseline replay: ${txns.filter(inRange).length} reproduced, 0 not reproduced`))
  t.ok(plain.err.some(l => /^backtest: \d+ decisions replayed in /.test(l)), 'a summary on stderr')

  const json = await cli(['--rules', raised, '--json'])
  t.equal(json.code, 0)
  const report = JSON.parse(json.out.join('\n')) as Record<string, unknown>
  t.same(Object.keys(report), ['from', 'to', 'decisions', 'baseline', 'changes', 'rules', 'changed', 'warnings'])
  t.same(Object.keys(report.baseline as object), ['reproduced', 'unreproduced'])
  t.same(Object.keys((report.rules as object[])[0] as object), ['id', 'in', 'hits', 'approvedToDeclined', 'declinedToApproved'])
  t.same(Object.keys((report.changed as object[])[0] as object), ['reference', 'urn', 'from', 'to', 'baselineRule', 'candidateRule'])
  t.same((report.changes as { declinedToApproved: unknown }).declinedToApproved, { count: want.toApproved.length, amount: sum(want.toApproved) })
  t.equal(report.from, new Date(FROM).toISOString())

  // Shares of customers replayed in worker threads give the very same report as one thread.
  const one = await cli(['--rules', raised, '--json', '--workers', '1'])
  const three = await cli(['--rules', raised, '--json', '--workers', '3'])
  t.same(JSON.parse(three.out.join('\n')), JSON.parse(one.out.join('\n')), 'three workers, one report')
  t.same(JSON.parse(one.out.join('\n')), report)
  t.equal((await cli(['--rules', raised, '--workers', '0'])).code, 2, '--workers 0 is refused')
})

t.test('the command: usage and journal errors', async t => {
  const cli = async (args: string[], env: Record<string, string> = {}) => {
    const err: string[] = []
    const code = await main(['rules', 'backtest', ...args], { out: () => {}, err: l => { err.push(l) }, env })
    return { code, err }
  }
  const range = ['--from', '2026-11-01T00:00:00Z', '--to', '2026-11-02T00:00:00Z']
  t.equal((await cli(range)).code, 2, '--rules is required')
  t.equal((await cli(['--rules', defaultRulesDir, '--from', 'yesterday', '--to', '2026-11-02T00:00:00Z'])).code, 2, 'a bad time')
  t.equal((await cli(['--rules', defaultRulesDir, '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-01T00:00:00Z'])).code, 2, 'from after to')
  const noRedis = await cli(['--rules', defaultRulesDir, ...range], { RULES_DIR: defaultRulesDir })
  t.equal(noRedis.code, 2)
  t.match(noRedis.err, [/^cannot read the journal from Redis: set REDIS_URL or REDIS_CLUSTER_NODES/], 'without --journal it reads Redis, and says which variables name it')
  const missing = await cli(['--rules', defaultRulesDir, ...range, '--journal', '/nonexistent/journal.ndjson'], { RULES_DIR: defaultRulesDir })
  t.equal(missing.code, 2)
  t.match(missing.err.at(-1), /cannot read the journal .*ENOENT/)
  const dir = await tempDir(t)
  const bad = join(dir, 'bad.ndjson')
  await writeNdjson(bad, [])
  const { writeFile } = await import('node:fs/promises')
  await writeFile(bad, '{"v":1}\nnot json\n')
  const refused = await cli(['--rules', defaultRulesDir, ...range, '--journal', bad], { RULES_DIR: defaultRulesDir })
  t.equal(refused.code, 2)
  t.match(refused.err.at(-1), /^journal refused: .*bad\.ndjson:1: /)
  t.equal((await cli(['--rules', join(defaultRulesDir, 'nope'), ...range, '--journal', bad])).code, 1, 'a refused rule set')
  t.equal((await main(['rules', 'check', defaultRulesDir, '--journal', bad], { out: () => {}, err: () => {}, env: {} })), 2, 'backtest options belong to backtest')
})
