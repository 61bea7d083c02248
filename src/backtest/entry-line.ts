// One export line read as a journal entry without JSON.parse, for the lines `extauth decisions export` writes
// (JSON.stringify of src/journal/entry.ts: its keys in its order, no whitespace). JSON.parse builds a generic
// object, looking every key up as it comes, and is much of a replay's cost; here one regular expression matches
// the whole line against the export's layout, and its captures become the entry's values. It is strict: the
// expression covers every character of the line, so it matches only JSON whose value JSON.parse gives equal.
// Anything else (another key order, a missing or unknown field, whitespace, an escape sequence, a control
// character, a `__proto__` key) gives null, and the caller parses the line with JSON.parse: a line written by
// another tool still reads the same.
import type { JournalEntry } from '../domain/journal.js'

/** a JSON string without escapes or control characters (all JSON.stringify writes for plain text) */
const STR = '"[^"\\\\\\u0000-\\u001f]*"'
/** the same, its content captured */
const CAP = '"([^"\\\\\\u0000-\\u001f]*)"'
/** a JSON number (its grammar; Number() reads it as JSON.parse does) */
const NUM = '-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?(?:[eE][+-]?[0-9]+)?'
const NUM_OR_NULL = `(?:null|${NUM})`
/** one card control's settings, keyed by its kind */
const CONTROL = `${STR}:\\{"enabled":(?:true|false),"perTransactionMax":${NUM_OR_NULL},"dailyMax":${NUM_OR_NULL}\\}`

/** The export's layout; the numbered captures are read by `parseExportLine` below. */
const LINE = new RegExp('^\\{"v":1' +
  `,"urn":${CAP}` + // 1
  `,"reference":${CAP}` + // 2
  `,"last4":${CAP}` + // 3
  `,"request":(\\{(?:${STR}:${STR}(?:,${STR}:${STR})*)?\\})` + // 4: the object's text
  `,"arrivedAt":${CAP}` + // 5
  `,"decidedAt":(?:null|${CAP})` + // 6
  `,"code":${CAP}` + // 7
  `,"reason":${CAP}` + // 8
  `,"ruleId":(?:null|${CAP})` + // 9
  `,"control":(?:null|\\{"kind":${CAP},"check":${CAP},"limit":(?:null|(${NUM})),"totalBefore":(?:null|(${NUM})),"debit":(${NUM})\\})` + // 10-14
  `,"limit":(?:null|\\{"ruleId":${CAP},"usedBefore":(${NUM}),"max":(${NUM})\\})` + // 15-17
  `,"availableSeen":(?:null|(${NUM}))` + // 18
  `,"debit":(${NUM})` + // 19
  `,"shadowHits":\\[((?:${STR}(?:,${STR})*)?)\\]` + // 20: the array's inside
  `,"rulesVersion":${CAP}` + // 21
  `,"controls":(null|\\{(?:${CONTROL}(?:,${CONTROL})*)?\\})` + // 22: the object's text
  `,"customerStatus":(?:null|${CAP})` + // 23
  `,"cardStatus":(?:null|${CAP})` + // 24
  ',"answeredOnDeadline":(true|false)' + // 25
  // the store's extras, present on some entries (src/journal/entry.ts)
  `(?:,"decidedCode":(null|${STR}))?` + // 26
  `(?:,"released":(${NUM}))?` + // 27
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

const orNull = (v: string | undefined): string | null => v ?? null

/**
 * A matched JSON number's value: a plain integer of up to 15 digits (exact in a double) summed here, which
 * spares Number() a call into the engine's runtime for a new string; anything else (a fraction, an exponent,
 * more digits) by Number(), which reads JSON's grammar as JSON.parse does.
 */
function num (v: string): number {
  const negative = v.charCodeAt(0) === 45
  const from = negative ? 1 : 0
  if (v.length - from > 15) return Number(v)
  let n = 0
  for (let i = from; i < v.length; i++) {
    const d = v.charCodeAt(i) - 48
    if (d < 0 || d > 9) return Number(v)
    n = n * 10 + d
  }
  // -0 as JSON.parse gives it
  return negative ? -n : n
}

const numOrNull = (v: string | undefined): number | null => (v === undefined ? null : num(v))

/**
 * The request's keys by position, as in the lines before: a request's fields come in the order its sender
 * wrote them, mostly the same from one line to the next, and a key taken from here is not a new string for
 * the object to look up (nor garbage to collect).
 */
const requestKeys: string[] = []

/** `{"name":"value",...}` as matched (no escapes inside), or null for a `__proto__` key. */
function stringMap (text: string): Record<string, string> | null {
  const out: Record<string, string> = {}
  for (let p = 1, i = 0; p < text.length - 1; i++) {
    let key = requestKeys[i]
    let keyEnd: number
    if (key !== undefined && text.startsWith(key, p + 1) && text.charCodeAt(p + 1 + key.length) === 34) {
      keyEnd = p + 1 + key.length
    } else {
      keyEnd = text.indexOf('"', p + 1)
      key = text.slice(p + 1, keyEnd)
      // JSON.parse makes it an own property; an assignment would set the prototype
      if (key === '__proto__') return null
      if (i < 64) requestKeys[i] = key
    }
    const valueEnd = text.indexOf('"', keyEnd + 3)
    out[key] = text.slice(keyEnd + 3, valueEnd)
    p = valueEnd + 2
  }
  return out
}

/** `{"ATM":{"enabled":true,"perTransactionMax":null,"dailyMax":4000000},...}` as matched, or null. */
function controlsOf (text: string): Controls | null {
  const out: Controls = {}
  for (let p = 1; p < text.length - 1;) {
    const keyEnd = text.indexOf('"', p + 1)
    const kind = text.slice(p + 1, keyEnd)
    if (kind === '__proto__') return null
    // ":{"enabled":
    p = keyEnd + 13
    const enabled = text.charCodeAt(p) === 116
    // true or false, then ,"perTransactionMax":
    p += (enabled ? 4 : 5) + 21
    let end = text.indexOf(',', p)
    const perTransactionMax = text.charCodeAt(p) === 110 ? null : num(text.slice(p, end))
    // ,"dailyMax":
    p = end + 12
    end = text.indexOf('}', p)
    const dailyMax = text.charCodeAt(p) === 110 ? null : num(text.slice(p, end))
    out[kind] = { enabled, perTransactionMax, dailyMax }
    p = end + 2
  }
  return out
}

/** The entry the line holds, equal to what JSON.parse gives, or null when the line is not of the export's layout. */
export function parseExportLine (line: string): JournalEntry | null {
  const m = LINE.exec(line)
  if (m === null) return null
  const request = stringMap(m[4] as string)
  const controlsText = m[22] as string
  const controls = controlsText === 'null' ? null : controlsOf(controlsText)
  if (request === null || (controls === null && controlsText !== 'null')) return null
  const shadowText = m[20] as string
  const e: JournalEntry & { decidedCode?: string | null, released?: number } = {
    v: 1,
    urn: m[1] as string,
    reference: m[2] as string,
    last4: m[3] as string,
    request,
    arrivedAt: m[5] as string,
    decidedAt: orNull(m[6]),
    code: m[7] as string,
    reason: m[8] as string,
    ruleId: orNull(m[9]),
    control: m[10] === undefined
      ? null
      : { kind: m[10], check: m[11] as Control['check'], limit: numOrNull(m[12]), totalBefore: numOrNull(m[13]), debit: num(m[14] as string) },
    limit: m[15] === undefined ? null : { ruleId: m[15], usedBefore: num(m[16] as string), max: num(m[17] as string) },
    availableSeen: numOrNull(m[18]),
    debit: num(m[19] as string),
    shadowHits: shadowText === '' ? [] : shadowText.slice(1, -1).split('","'),
    rulesVersion: m[21] as string,
    controls,
    customerStatus: orNull(m[23]),
    cardStatus: orNull(m[24]),
    answeredOnDeadline: m[25] === 'true'
  }
  const decidedCode = m[26]
  if (decidedCode !== undefined) e.decidedCode = decidedCode === 'null' ? null : decidedCode.slice(1, -1)
  if (m[27] !== undefined) e.released = num(m[27])
  return e
}
