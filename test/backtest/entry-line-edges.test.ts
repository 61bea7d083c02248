// Edge cases of reading an export line directly (src/backtest/entry-line.ts: a layout check, then a walk that
// reads each value from its place), line by line against JSON.parse: every value shape the layout allows reads
// the same, anything else is left to JSON.parse (null), and a line neither reading takes is reported with its
// number rather than dropped.
import t from 'tap'
import { join } from 'node:path'
import { writeFile } from 'node:fs/promises'
import { isDeepStrictEqual } from 'node:util'
import { parseExportLine } from '../../src/backtest/entry-line.js'
import { JournalLineError, NdjsonJournal } from '../../src/backtest/ndjson-source.js'
import type { JournalEntry } from '../../src/domain/journal.js'
import { tempDir } from './helpers.js'

/** An entry as the export writes it (src/store/decision-entry.ts: its keys in this order). */
function base (): JournalEntry & { decidedCode?: string | null, released?: number, reversedAt?: string } {
  return {
    v: 1,
    urn: 'URN0000042',
    reference: 'TRN000000017',
    last4: '4242',
    request: { urn: 'URN0000042', channel: 'ATM', transactionAmount: '150000', mcc: '6011', last4Digits: '4242' },
    arrivedAt: '2026-11-10T10:00:00.123Z',
    decidedAt: '2026-11-10T10:00:00.130Z',
    code: '00',
    reason: 'approved',
    ruleId: null,
    control: null,
    limit: null,
    availableSeen: null,
    debit: 150000,
    shadowHits: [],
    rulesVersion: '0e20ab44356b',
    controls: { ATM: { enabled: true, perTransactionMax: null, dailyMax: 4000000 } },
    customerStatus: 'ACTIVE',
    cardStatus: 'ACTIVE',
    answeredOnDeadline: false
  }
}

/** The line of an entry changed by `edit`, written as the export writes (JSON.stringify, key order kept). */
function line (edit: (e: ReturnType<typeof base>) => void = () => {}): string {
  const e = base()
  edit(e)
  return JSON.stringify(e)
}

/** Lines of the export's layout, with every value shape it allows: each must be read directly, as JSON.parse reads it. */
const direct: Record<string, string> = {
  plain: line(),
  'every nullable value set': line(e => {
    e.code = '61'
    e.reason = 'control_limit'
    e.ruleId = 'atm-daily-amount'
    e.control = { kind: 'ATM', check: 'dailyMax', limit: 4000000, totalBefore: 3900000, debit: 150000 }
    e.limit = { ruleId: 'atm-daily-count', usedBefore: 5, max: 5 }
    e.availableSeen = 12
  }),
  'a control without limit or total': line(e => { e.control = { kind: 'international', check: 'enabled', limit: null, totalBefore: null, debit: 0 } }),
  'every nullable value null': line(e => {
    e.decidedAt = null
    e.controls = null
    e.customerStatus = null
    e.cardStatus = null
  }),
  'an empty request, no controls, no hits': line(e => { e.request = {}; e.controls = {}; e.shadowHits = [] }),
  'several shadow hits': line(e => { e.shadowHits = ['watch-quasi-cash', 'ecom-hourly-count', ''] }),
  'several controls': line(e => {
    e.controls = { POS: { enabled: false, perTransactionMax: 500000, dailyMax: null }, international: { enabled: true, perTransactionMax: 0, dailyMax: 1000000 } }
  }),
  'another request key order, and keys unusual but plain': line(e => {
    e.request = { last4Digits: '4242', 'odd key': 'x', channel: 'POS', '': 'empty key', transactionAmount: '1', 'ÜBER 東京': 'unicode' }
  }),
  'empty strings': line(e => { e.urn = ''; e.reference = ''; e.last4 = ''; e.rulesVersion = ''; e.request = { channel: '' } }),
  'unicode text': line(e => { e.request = { ...e.request, merchantName: 'CAFÉ 東京 😀' } }),
  // JSON.stringify writes -0 as 0: the negative zero is written into the line by hand
  'numbers: zero, negative zero, fraction, exponent, 16 digits, huge': line(e => {
    e.debit = 0
    e.limit = { ruleId: 'x', usedBefore: 1.5, max: 1e21 }
    e.control = { kind: 'ATM', check: 'dailyMax', limit: 1234567890123456, totalBefore: -42, debit: 7 }
  }).replace('"availableSeen":null', '"availableSeen":-0'),
  'an exponent with a capital E and a minus': line().replace('"availableSeen":null', '"availableSeen":15E-1'),
  'the store\'s decidedCode, null': line(e => { e.answeredOnDeadline = true; e.decidedCode = null }),
  'the store\'s decidedCode and released': line(e => { e.answeredOnDeadline = true; e.decidedCode = '00'; e.released = 150000 }),
  'released alone': line(e => { e.released = 3 }),
  'released by a reversal': line(e => { e.released = 500; e.reversedAt = '2026-11-23T12:15:00.000Z' }),
  'all three extras': line(e => { e.answeredOnDeadline = true; e.decidedCode = '00'; e.released = 7; e.reversedAt = '2026-11-23T12:15:00.000Z' })
}

/** Lines the direct reading must leave to JSON.parse (null): not the export's layout, or not JSON at all. */
const plain = line()
const others: Record<string, string> = {
  'an escaped quote': line(e => { e.request = { ...e.request, merchantName: 'SHOP "ONE"' } }),
  'an escaped backslash': line(e => { e.reference = 'C:\\TILL' }),
  'an escaped control character': line(e => { e.request = { ...e.request, merchantName: 'TAB\tSHOP' } }),
  'a \\u escape for a plain letter': plain.replace('"ATM"', '"\\u0041TM"'),
  'a raw control character': plain.replace('"ATM"', '"A\u0001TM"'),
  'another key order': JSON.stringify(Object.assign({ last4: '4242' }, base())),
  'a missing optional field': JSON.stringify({ ...base(), decidedAt: undefined }),
  'an unknown field': JSON.stringify({ ...base(), note: 'x' }),
  'an unknown field in a control': plain.replace('"dailyMax":4000000}', '"dailyMax":4000000,"x":1}'),
  'whitespace': JSON.stringify(base(), null, 1).replace(/\n/g, ' '),
  'a space after a colon': plain.replace('"code":"00"', '"code": "00"'),
  'the extras in the other order': line(e => { e.released = 1; e.decidedCode = '00' }),
  'reversedAt before released': line(e => { e.reversedAt = '2026-11-23T12:15:00.000Z'; e.released = 1 }),
  'a __proto__ request key': plain.replace('"request":{', '"request":{"__proto__":"x",'),
  'a __proto__ control kind': plain.replace('"controls":{', '"controls":{"__proto__":{"enabled":true,"perTransactionMax":null,"dailyMax":null},'),
  'a number with a leading zero': plain.replace('"debit":150000', '"debit":0150000'),
  'a number with a plus sign': plain.replace('"debit":150000', '"debit":+150000'),
  'a fraction without digits': plain.replace('"debit":150000', '"debit":150000.'),
  'a string for a number': plain.replace('"debit":150000', '"debit":"150000"'),
  'a number for a string': plain.replace('"code":"00"', '"code":0'),
  'a version 2 line': plain.replace('{"v":1,', '{"v":2,'),
  'a trailing comma': plain.slice(0, -1) + ',}',
  'a cut line': plain.slice(0, -1),
  'trailing text': plain + 'x',
  'a trailing carriage return': plain + '\r',
  'an empty line': '',
  'not JSON': 'hello'
}

t.test('every value shape of the export\'s layout is read directly, equal to JSON.parse', async t => {
  for (const [name, l] of Object.entries(direct)) {
    const got = parseExportLine(l)
    t.ok(got !== null, `${name}: read directly`)
    t.ok(isDeepStrictEqual(got, JSON.parse(l)), `${name}: as JSON.parse reads it`)
  }
  const zero = parseExportLine(direct['numbers: zero, negative zero, fraction, exponent, 16 digits, huge'] as string)
  t.ok(Object.is(zero?.availableSeen, -0), '-0 stays -0')
})

t.test('lines of another layout are left to JSON.parse', async t => {
  for (const [name, l] of Object.entries(others)) t.equal(parseExportLine(l), null, name)
})

t.test('a line read after a line of another layout reads the same (the walk keeps no state across lines)', async t => {
  const lines = [...Object.values(direct), ...Object.values(others)]
  // each direct line after every other line, so the request keys remembered from the line before differ
  for (const before of lines) {
    for (const [name, l] of Object.entries(direct)) {
      parseExportLine(before)
      if (!isDeepStrictEqual(parseExportLine(l), JSON.parse(l))) t.fail(`${name} after ${before}`)
    }
  }
  t.pass(`${lines.length * Object.keys(direct).length} pairs`)
})

t.test('the journal file: every line as JSON.parse reads it, and a bad line reported with its number', async t => {
  const dir = await tempDir(t)
  const good = [...Object.values(direct), others['an escaped quote'] as string, others['another key order'] as string, others['whitespace'] as string]
  const file = join(dir, 'journal.ndjson')
  await writeFile(file, good.join('\n') + '\n')
  const read: JournalEntry[] = []
  for await (const e of new NdjsonJournal(file).read(0, Number.MAX_SAFE_INTEGER)) read.push(e)
  t.same(read, good.map(l => JSON.parse(l) as JournalEntry), 'the same entries, in order')

  for (const [name, bad] of Object.entries({ 'a cut line': others['a cut line'], 'not JSON': 'hello', 'a version 2 line': others['a version 2 line'] })) {
    const badFile = join(dir, 'bad.ndjson')
    await writeFile(badFile, [good[0], good[1], bad, good[2]].join('\n') + '\n')
    const err = await (async () => {
      for await (const e of new NdjsonJournal(badFile).read(0, Number.MAX_SAFE_INTEGER)) void e
    })().then(() => null, (e: unknown) => e)
    t.ok(err instanceof JournalLineError && err.line === 3, `${name}: reported at line 3`)
  }
})
