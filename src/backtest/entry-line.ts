// One export line read as a journal entry without JSON.parse, for the lines `extauth decisions export` writes
// (JSON.stringify of src/store/decision-entry.ts: its keys in its order, no whitespace). JSON.parse builds a generic
// object, looking every key up as it comes, and is much of a replay's cost. Here one regular expression checks
// the whole line against the export's layout, then a walk that knows the layout reads each value from its
// place. It is strict: the expression covers every character of the line, so it matches only JSON whose value
// JSON.parse gives equal. Anything else (another key order, a missing or unknown field, whitespace, an escape
// sequence, a control character, a `__proto__` key) gives null, and the caller parses the line with
// JSON.parse: a line written by another tool still reads the same.
import type { JournalEntry } from '../domain/journal.js'

/** a JSON string without escapes or control characters (all JSON.stringify writes for plain text) */
const STR = '"[^"\\\\\\u0000-\\u001f]*"'
/** a JSON number (its grammar; Number() reads it as JSON.parse does) */
const NUM = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
const NUM_OR_NULL = `(?:null|${NUM})`
/** one card control's settings, keyed by its kind */
const CONTROL = `${STR}:\\{"enabled":(?:true|false),"perTransactionMax":${NUM_OR_NULL},"dailyMax":${NUM_OR_NULL}\\}`

/**
 * The export's layout. It only checks the line, capturing nothing: a match's captures are an array of new
 * strings, and the walk below finds each value where the layout puts it.
 */
const LINE = new RegExp('^\\{"v":1' +
  `,"urn":${STR},"reference":${STR},"last4":${STR}` +
  `,"request":\\{(?:${STR}:${STR}(?:,${STR}:${STR})*)?\\}` +
  `,"arrivedAt":${STR},"decidedAt":(?:null|${STR}),"code":${STR},"reason":${STR},"ruleId":(?:null|${STR})` +
  `,"control":(?:null|\\{"kind":${STR},"check":${STR},"limit":${NUM_OR_NULL},"totalBefore":${NUM_OR_NULL},"debit":${NUM}\\})` +
  `,"limit":(?:null|\\{"ruleId":${STR},"usedBefore":${NUM},"max":${NUM}\\})` +
  `,"availableSeen":${NUM_OR_NULL},"debit":${NUM}` +
  `,"shadowHits":\\[(?:${STR}(?:,${STR})*)?\\]` +
  `,"rulesVersion":${STR}` +
  `,"controls":(?:null|\\{(?:${CONTROL}(?:,${CONTROL})*)?\\})` +
  `,"customerStatus":(?:null|${STR}),"cardStatus":(?:null|${STR})` +
  ',"answeredOnDeadline":(?:true|false)' +
  // the store's extras, present on some entries (src/store/decision-entry.ts)
  `(?:,"decidedCode":(?:null|${STR}))?` +
  `(?:,"released":${NUM})?` +
  `(?:,"reversedAt":${STR})?` +
  '\\}$')

/**
 * A copy of `s` that does not hold on to the line it was read from. The engine takes a substring of 13
 * characters or more as a view into the whole line, so a reference or urn kept for the report (or a card's
 * control kind kept in the replay's state) would keep its ~800-character line alive; the copy keeps itself.
 */
export function detached (s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1)
}

type Controls = NonNullable<JournalEntry['controls']>
type Control = NonNullable<JournalEntry['control']>

// The walk, over a line LINE matched: each reader takes the line and the position its value starts at, returns
// the value and leaves in `at` the position right after it. A key's place follows from the end of the value
// before it (`at + ',"key":'.length`), and a string's end is its next quote (it holds no escape).
let at = 0

const N = 110 // 'n' of null
const T = 116 // 't' of true

function str (s: string, p: number): string {
  const q = s.indexOf('"', p + 1)
  at = q + 1
  return s.slice(p + 1, q)
}

function strOrNull (s: string, p: number): string | null {
  if (s.charCodeAt(p) === N) { at = p + 4; return null }
  return str(s, p)
}

function bool (s: string, p: number): boolean {
  const v = s.charCodeAt(p) === T
  at = p + (v ? 4 : 5)
  return v
}

/** A number's characters: digits, sign, point, exponent. */
function inNumber (c: number): boolean {
  return (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69
}

/**
 * The number at p: a plain integer of up to 15 digits (exact in a double) summed here, which spares a new
 * string and a call into the engine's runtime; anything else (a fraction, an exponent, more digits) by
 * Number(), which reads JSON's grammar as JSON.parse does.
 */
function num (s: string, p: number): number {
  let q = p
  while (inNumber(s.charCodeAt(q))) q++
  at = q
  const negative = s.charCodeAt(p) === 45
  const from = negative ? p + 1 : p
  if (q - from > 15) return Number(s.slice(p, q))
  let n = 0
  for (let i = from; i < q; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return Number(s.slice(p, q))
    n = n * 10 + d
  }
  // -0 as JSON.parse gives it
  return negative ? -n : n
}

function numOrNull (s: string, p: number): number | null {
  if (s.charCodeAt(p) === N) { at = p + 4; return null }
  return num(s, p)
}

/** Whether `text` is at p, compared code by code (startsWith is a call into the engine's runtime). */
function isAt (s: string, text: string, p: number): boolean {
  for (let i = 0; i < text.length; i++) {
    if (s.charCodeAt(p + i) !== text.charCodeAt(i)) return false
  }
  return true
}

/**
 * The request's keys by position, as in the lines before: a request's fields come in the order its sender
 * wrote them, mostly the same from one line to the next, and a key taken from here is not a new string for
 * the object to look up (nor garbage to collect).
 */
const requestKeys: string[] = []

/** The `{"name":"value",...}` at p, or null for a `__proto__` key (JSON.parse makes it an own property). */
function stringMap (s: string, p: number): Record<string, string> | null {
  const out: Record<string, string> = {}
  if (s.charCodeAt(p + 1) === 125) { at = p + 2; return out }
  // p: the brace or comma before a key
  for (let i = 0; ; i++) {
    const keyEnd = s.indexOf('"', p + 2)
    let key = requestKeys[i]
    if (key === undefined || key.length !== keyEnd - p - 2 || !isAt(s, key, p + 2)) {
      key = s.slice(p + 2, keyEnd)
      // an assignment would set the prototype
      if (key === '__proto__') return null
      if (i < 64) requestKeys[i] = key
    }
    // `":` then the value
    out[key] = str(s, keyEnd + 2)
    if (s.charCodeAt(at) === 125) { at += 1; return out }
    p = at
  }
}

/** The `["a","b"]` at p. */
function stringList (s: string, p: number): string[] {
  const out: string[] = []
  if (s.charCodeAt(p + 1) === 93) { at = p + 2; return out }
  // p: the bracket or comma before a string
  for (;;) {
    out.push(str(s, p + 1))
    if (s.charCodeAt(at) === 93) { at += 1; return out }
    p = at
  }
}

function controlOrNull (s: string, p: number): Control | null {
  if (s.charCodeAt(p) === N) { at = p + 4; return null }
  const kind = str(s, p + '{"kind":'.length)
  const check = str(s, at + ',"check":'.length) as Control['check']
  const limit = numOrNull(s, at + ',"limit":'.length)
  const totalBefore = numOrNull(s, at + ',"totalBefore":'.length)
  const debit = num(s, at + ',"debit":'.length)
  at += 1
  return { kind, check, limit, totalBefore, debit }
}

function limitOrNull (s: string, p: number): JournalEntry['limit'] {
  if (s.charCodeAt(p) === N) { at = p + 4; return null }
  const ruleId = str(s, p + '{"ruleId":'.length)
  const usedBefore = num(s, at + ',"usedBefore":'.length)
  const max = num(s, at + ',"max":'.length)
  at += 1
  return { ruleId, usedBefore, max }
}

/** `{"ATM":{"enabled":true,"perTransactionMax":null,"dailyMax":4000000},...}` or null at p; undefined for a `__proto__` kind. */
function controlsOrNull (s: string, p: number): Controls | null | undefined {
  if (s.charCodeAt(p) === N) { at = p + 4; return null }
  const out: Controls = {}
  if (s.charCodeAt(p + 1) === 125) { at = p + 2; return out }
  // p: the brace or comma before a kind
  for (;;) {
    const kind = str(s, p + 1)
    if (kind === '__proto__') return undefined
    const enabled = bool(s, at + ':{"enabled":'.length)
    const perTransactionMax = numOrNull(s, at + ',"perTransactionMax":'.length)
    const dailyMax = numOrNull(s, at + ',"dailyMax":'.length)
    out[kind] = { enabled, perTransactionMax, dailyMax }
    // at: the settings' closing brace; then a comma or the closing brace
    if (s.charCodeAt(at + 1) === 125) { at += 2; return out }
    p = at + 1
  }
}

/** The entry the line holds, equal to what JSON.parse gives, or null when the line is not of the export's layout. */
export function parseExportLine (s: string): JournalEntry | null {
  if (!LINE.test(s)) return null
  const urn = str(s, '{"v":1,"urn":'.length)
  const reference = str(s, at + ',"reference":'.length)
  const last4 = str(s, at + ',"last4":'.length)
  const request = stringMap(s, at + ',"request":'.length)
  if (request === null) return null
  const arrivedAt = str(s, at + ',"arrivedAt":'.length)
  const decidedAt = strOrNull(s, at + ',"decidedAt":'.length)
  const code = str(s, at + ',"code":'.length)
  const reason = str(s, at + ',"reason":'.length)
  const ruleId = strOrNull(s, at + ',"ruleId":'.length)
  const control = controlOrNull(s, at + ',"control":'.length)
  const limit = limitOrNull(s, at + ',"limit":'.length)
  const availableSeen = numOrNull(s, at + ',"availableSeen":'.length)
  const debit = num(s, at + ',"debit":'.length)
  const shadowHits = stringList(s, at + ',"shadowHits":'.length)
  const rulesVersion = str(s, at + ',"rulesVersion":'.length)
  const controls = controlsOrNull(s, at + ',"controls":'.length)
  if (controls === undefined) return null
  const customerStatus = strOrNull(s, at + ',"customerStatus":'.length)
  const cardStatus = strOrNull(s, at + ',"cardStatus":'.length)
  const answeredOnDeadline = bool(s, at + ',"answeredOnDeadline":'.length)
  const e: JournalEntry & { decidedCode?: string | null, released?: number, reversedAt?: string } = {
    v: 1, urn, reference, last4, request, arrivedAt, decidedAt, code, reason, ruleId, control, limit, availableSeen, debit,
    shadowHits, rulesVersion, controls, customerStatus, cardStatus, answeredOnDeadline
  }
  // the store's extras: `,"d`ecidedCode, `,"rel`eased, `,"rev`ersedAt after answeredOnDeadline
  if (s.charCodeAt(at + 2) === 100) e.decidedCode = strOrNull(s, at + ',"decidedCode":'.length)
  if (s.charCodeAt(at + 2) === 114 && s.charCodeAt(at + 4) === 108) e.released = num(s, at + ',"released":'.length)
  // `,"rev`ersedAt
  if (s.charCodeAt(at + 4) === 118) e.reversedAt = str(s, at + ',"reversedAt":'.length)
  return e
}
