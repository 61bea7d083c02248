// The backtest reads an export line either directly (src/backtest/entry-line.ts, the export's own layout) or
// with JSON.parse (anything else). Both must give the same entry, and so the same replay, for every line the
// exporter writes (through its own code: decisionEntryOf and exportJournal), for unusual values, and for lines
// written otherwise; a line the direct reading takes must be one JSON.parse reads the same.
import t from 'tap'
import { join } from 'node:path'
import { writeFile } from 'node:fs/promises'
import { Writable } from 'node:stream'
import { isDeepStrictEqual } from 'node:util'
import type { JournalEntry } from '../../src/domain/journal.js'
import type { DecisionRecord } from '../../src/store/types.js'
import { decisionEntryOf } from '../../src/store/decision-entry.js'
import { exportJournal } from '../../src/cli/decisions-export.js'
import { parseExportLine } from '../../src/backtest/entry-line.js'
import { runBacktest } from '../../src/backtest/engine.js'
import { runBacktestParallel } from '../../src/backtest/parallel.js'
import { NdjsonJournal } from '../../src/backtest/ndjson-source.js'
import { loadRuleSet } from '../../src/rules/load.js'
import type { CompiledRuleSet } from '../../src/rules/types.js'
import { defaultRulesDir, editedRules, memorySource, rng, tempDir } from './helpers.js'

const TZ = 'Asia/Kolkata'
const START = Date.UTC(2026, 10, 10)

/** Values a request field may hold as sent: quotes, backslashes, unicode, control and separator characters. */
const ODD_TEXT = ['SHOP "ONE"', 'C:\\TILL\\7', 'CAFÉ ÜBER', '東京 STORE', 'EMOJI 😀', 'TAB\tSHOP', 'LINE\u2028SEP', 'LONE \ud800', '', ' spaced ', '</script>', 'NUL\u0000']

interface Shape { i: number, channel: string, odd: boolean }

/** A stored decision as the store keeps it, varied by `i` over the shapes a record can take. */
function record (s: Shape, rnd: (n: number) => number, version: string): DecisionRecord {
  const { i, channel } = s
  const c = rnd(40)
  const urn = `URN${String(c).padStart(4, '0')}`
  const last4 = String(4000 + c)
  const reference = `TRN${String(i).padStart(7, '0')}`
  const amount = channel === 'ATM' ? 100_000 * (1 + rnd(8)) : 100 + rnd(900_000)
  const crossBorder = rnd(6) === 0
  const request: Record<string, string> = {
    urn, customerId: `C${c}`, merchantName: s.odd ? ODD_TEXT[i % ODD_TEXT.length] as string : 'SHOP', terminalId: `T${rnd(50)}`,
    mcc: ['5411', '6011', '7995', '6051', '5812'][rnd(5)] as string, systemTraceAuditNumber: String(i), cardNetwork: 'RUPAY', channel,
    transactionAmount: String(amount), transactionReferenceNumber: reference, currencyCode: '356', last4Digits: last4
  }
  if (crossBorder) { request.billingCurrency = '840'; request.billingAmount = String(Math.max(1, Math.floor(amount / 80))) }
  if (s.odd && i % 5 === 0) request['odd "key"\\'] = 'x'
  // an own property named __proto__, as JSON.parse makes one
  if (s.odd && i % 7 === 0) Object.defineProperty(request, '__proto__', { value: 'not a prototype', enumerable: true, writable: true, configurable: true })
  const debit = Number(request.billingAmount ?? request.transactionAmount)
  const kind = rnd(12)
  const code = kind === 0 ? '51' : kind === 1 ? '65' : kind === 2 ? '61' : '00'
  const reason = kind === 0 ? 'insufficient_funds' : kind === 1 ? 'limit' : kind === 2 ? 'control_limit' : 'approved'
  const arrivedAtMs = START + i * 97_000 + rnd(1000)
  const controlsSeen: DecisionRecord['controlsSeen'] = rnd(5) === 0
    ? (rnd(2) === 0 ? null : undefined)
    : { [channel]: { e: rnd(20) === 0 ? '0' : '1', p: rnd(3) === 0 ? String(500_000 + rnd(500_000)) : '', d: channel === 'ATM' ? '4000000' : '' } }
  if (crossBorder && controlsSeen != null) controlsSeen.international = { e: '1', p: '', d: '1000000' }
  const onDeadline = rnd(25) === 0
  return {
    urn, reference, last4, attempt: 'a1', code: onDeadline ? '05' : code, reason: onDeadline ? 'deadline' : reason,
    ruleId: kind === 1 ? 'atm-daily-count' : null, debit: String(debit), held: '0',
    released: rnd(10) === 0 ? String(1 + rnd(debit)) : '0', fingerprint: 'f', shadowLimitHits: rnd(8) === 0 ? ['ecom-hourly-count'] : [],
    limitEntries: [], arrivedAtMs, deadlineAtMs: arrivedAtMs + 2000, decidedAtMs: arrivedAtMs + 3,
    answeredOnDeadline: onDeadline, decidedCode: onDeadline ? (rnd(2) === 0 ? '00' : null) : null, reversal: null,
    meta: rnd(15) === 0
      ? null
      : { rulesVersion: rnd(20) === 0 ? 'older' : version, shadowHits: rnd(6) === 0 ? [{ ruleId: 'watch-quasi-cash', code: '05' }] as never : [], transactionAmount: String(amount), currencyCode: '356', channel, ...(rnd(10) === 0 ? {} : { request }) },
    controlEntries: [],
    control: kind === 2 ? { control: channel as never, check: 'dailyMax', ...(rnd(2) === 0 ? { limit: 4_000_000, totalBefore: 3_900_000 } : {}), debit } : null,
    ...(rnd(6) === 0 ? {} : { customerStatus: rnd(30) === 0 ? 'BLOCKED' : 'ACTIVE', cardStatus: rnd(40) === 0 ? null : 'ACTIVE' }),
    availableSeen: kind === 0 ? String(rnd(100)) : null,
    limitSeen: kind === 1 ? { ruleId: 'atm-daily-count', usedBefore: '5', max: '5' } : null,
    controlsSeen
  }
}

/** The lines `extauth decisions export` writes for these records, through its own code. */
async function exported (records: readonly DecisionRecord[]): Promise<string[]> {
  let text = ''
  const out = new Writable({ write (chunk, _enc, done) { text += String(chunk); done() } })
  const source = { async * read () { for (const r of records) yield decisionEntryOf(r) } }
  await exportJournal(source, 0, Number.MAX_SAFE_INTEGER, out, () => {})
  return text.split('\n').filter(l => l !== '')
}

/** What the backtest reads a line as: the direct reading when it takes the line, else JSON.parse. */
function agrees (line: string): { direct: boolean, same: boolean } {
  const direct = parseExportLine(line)
  if (direct === null) return { direct: false, same: true }
  let general: unknown
  try {
    general = JSON.parse(line)
  } catch {
    return { direct: true, same: false }
  }
  return { direct: true, same: isDeepStrictEqual(direct, general) }
}

async function load (dir: string): Promise<CompiledRuleSet> {
  const r = await loadRuleSet(dir, { timezone: TZ })
  if (!r.ok) throw new Error(JSON.stringify(r.errors))
  return r.set
}

const CHANNELS = ['ATM', 'POS', 'ECOM', 'POS-Contactless']

t.test('every line shape the exporter writes reads the same directly as with JSON.parse', async t => {
  const baseline = await load(defaultRulesDir)
  const rnd = rng(41)
  const records = Array.from({ length: 600 }, (_, i) => record({ i, channel: CHANNELS[i % 4] as string, odd: i % 3 === 0 }, rnd, baseline.version))
  const lines = await exported(records)
  t.equal(lines.length, records.length)
  let direct = 0
  for (const line of lines) {
    const a = agrees(line)
    if (!a.same) t.fail(`read differently: ${line}`)
    if (a.direct) direct++
  }
  t.pass('no line read differently')
  // Plain lines take the direct reading; escapes (quotes, backslashes, control characters, a lone surrogate)
  // and a `__proto__` key are left to JSON.parse.
  t.ok(direct > lines.length / 2, `${direct} of ${lines.length} lines read directly`)
  const odd = lines.filter(l => l.includes('\\') || l.includes('"__proto__"'))
  t.ok(odd.length > 0 && odd.every(l => parseExportLine(l) === null), 'lines with escapes or a __proto__ key go to JSON.parse')
  const unicode = lines.find(l => l.includes('東京 STORE') && !l.includes('\\'))
  t.ok(unicode !== undefined && parseExportLine(unicode) !== null, 'plain unicode is read directly')
  t.ok(lines.some(l => l.includes('"decidedCode":') && parseExportLine(l) !== null), 'the store\'s decidedCode extra is read directly')
  t.ok(lines.some(l => l.includes('"released":') && parseExportLine(l) !== null), 'the store\'s released extra is read directly')
})

t.test('lines written otherwise, and every one-character change of a line, read the same or go to JSON.parse', async t => {
  const rnd = rng(7)
  const lines = await exported(Array.from({ length: 40 }, (_, i) => record({ i, channel: CHANNELS[i % 4] as string, odd: false }, rnd, 'v1')))
  const base = JSON.parse(lines[0] as string) as Record<string, unknown>
  const variants: Record<string, string> = {
    'an unknown field': JSON.stringify({ ...base, note: 'from another tool' }),
    'a missing optional field': JSON.stringify({ ...base, decidedAt: undefined }),
    'another key order': JSON.stringify({ urn: base.urn, v: 1, ...base }),
    'whitespace': JSON.stringify(base, null, 1).replace(/\n/g, ' '),
    'numbers written otherwise': (lines[0] as string).replace(/"debit":(\d+)/, '"debit":$1.0e0'),
    'a negative zero': (lines[0] as string).replace(/"availableSeen":[^,]+/, '"availableSeen":-0'),
    'a huge number': (lines[0] as string).replace(/"availableSeen":[^,]+/, '"availableSeen":123456789012345678901234'),
    'a version 2 line': (lines[0] as string).replace('{"v":1,', '{"v":2,'),
    'a raw tab in a string': (lines[0] as string).replace('"SHOP"', '"SH\tOP"'),
    'a trailing carriage return': (lines[0] as string) + '\r',
    'a cut line': (lines[0] as string).slice(0, -1),
    'an empty request': (lines[0] as string).replace(/"request":\{[^}]*\}/, '"request":{}'),
    'no card controls': (lines[0] as string).replace(/"controls":(null|\{.*?\}\}),"customerStatus"/, '"controls":{},"customerStatus"')
  }
  for (const [name, line] of Object.entries(variants)) t.ok(agrees(line).same, name)
  t.equal(parseExportLine(variants['a raw tab in a string'] as string), null, 'JSON refuses a raw tab: so does the direct reading')
  t.ok(parseExportLine(variants['a negative zero'] as string) !== null, '-0 is read directly')

  // Each position of a few lines, replaced by characters that matter to JSON.
  const swaps = ['"', '\\', ',', ':', '{', '}', '[', ']', '0', '1', '-', 'e', '.', 'n', 't', ' ', '\u0001', 'é']
  let checked = 0
  for (const line of lines.slice(0, 4)) {
    for (let p = 0; p < line.length; p++) {
      const changed = line.slice(0, p) + (swaps[rnd(swaps.length)] as string) + line.slice(p + 1)
      if (!agrees(changed).same) t.fail(`read differently: ${changed}`)
      checked++
    }
  }
  t.ok(checked > 1000, `${checked} changed lines checked`)
})

t.test('the same replay from the direct reading (one thread and workers) as from JSON.parse', async t => {
  const baseline = await load(defaultRulesDir)
  const raisedDir = await editedRules(t, { '20-atm.json': s => s.replace('"max": 5 }', '"max": 2 }') })
  const candidate = await load(raisedDir)
  const rnd = rng(20261110)
  const records = Array.from({ length: 1500 }, (_, i) => record({ i, channel: CHANNELS[rnd(4)] as string, odd: i % 4 === 0 }, rnd, baseline.version))
  const lines = await exported(records)
  const file = join(await tempDir(t), 'journal.ndjson')
  await writeFile(file, lines.join('\n') + '\n')
  const parsed = lines.map(l => JSON.parse(l) as JournalEntry)
  const fromMs = START + 86_400_000
  const toMs = START + 3 * 86_400_000
  const opts = { candidate, baseline, baselineMode: 'recorded' as const, fromMs, toMs, timezone: TZ, samplesMax: 1000 }
  const general = await runBacktest({ ...opts, source: memorySource(parsed) })
  const direct = await runBacktest({ ...opts, source: new NdjsonJournal(file) })
  const workers = await runBacktestParallel({ ...opts, file, candidateDir: raisedDir, baselineDir: defaultRulesDir, workers: 2 })
  t.ok(general.report.decisions > 500 && general.report.changes.approvedToDeclined.count > 0 && general.report.baseline.unreproduced.length > 0,
    'a replay with changes and unreproduced decisions to compare')
  t.same(direct.report, general.report, 'one thread')
  t.same(workers.report, general.report, 'two workers')
})
