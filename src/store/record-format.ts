// The stored form of a decision record in Redis, one definition for the readers (the store, the journal, the bench)
// and the scripts that write it (lua/includes/records.lua spells out the same field list and values, held to
// these by test/store/lua-files.test.ts).
//
// Two formats are read; the second is written:
// 1. a JSON object with named fields (every field of DecisionRecord, meta as a JSON string), written before
//    the compact form. Kept for its whole life: the scripts rewrite such a record in the same format.
// 2. `<head>\n<rest>`. The head is a JSON array, `[2, ...]` then the fields of RECORD_HEAD in order: what the
//    store decided and what a script reads or changes afterwards (a release, a reversal, a replay). The rest is
//    a JSON array written by Node with the request's side, `[last4, deadline - arrival ms, packed meta]`, which
//    the scripts keep as it is. decidedAtMs is kept as ms after arrivedAtMs, answeredOnDeadline as 1 or 0,
//    controlsSeen as one string '<kind>|<e>|<p>|<d>' a control, joined by ';' (kinds are words, the settings
//    digits). Left out because they are known
//    from elsewhere: urn and reference (the key), a limit entry's member (`<held>|<reference>`, see
//    limitMember) and a daily total's amount (held): every script that changes what is held moves the entries
//    with it. Of an entry's key only what is its own is kept: a limit window's `<rule>:<per>` (the key is
//    `<tag>:l:<rule>:<per>:<scope>`, the scope the urn, or urn and last4 for `card`), a daily total's
//    `<kind>:<day>` (of `<tag>:cd:<urn>:<last4>:<kind>:<day>`); the tag and the urn are the record key's.
// JSON text never holds a raw newline, so the first one splits the two parts.
import type { ControlDefault, ControlHit } from '../domain/controls.js'
import type { LimitCheck, RuleHit } from '../domain/rule-hits.js'
import { decisionKeyParts, part } from './keys.js'
import { controlHitOf, normalizeRecord } from './record.js'
import type { DecisionMeta, DecisionRecord } from './types.js'

/**
 * The head's fields after its leading format number, in order (Lua indexes them from 2). The authorize
 * script puts a new record's head together in this order (lua/includes/authorize-body.lua); the other scripts go by this list. Those after
 * controlsSeen are left out at the end of the array while they are null or empty (most decisions have no
 * rule, reversal, control hit...): a field the array does not reach reads as null, a list as empty.
 */
export const RECORD_HEAD = [
  'code', 'reason', 'debit', 'held', 'released', 'answeredOnDeadline', 'attempt', 'fingerprint', 'arrivedAtMs', 'decidedAtMs',
  'controlsSeen', 'customerStatus', 'cardStatus', 'limitEntries', 'controlEntries', 'shadowLimitHits', 'ruleId', 'decidedCode',
  'reversal', 'attemptArrivedAtMs', 'control', 'availableSeen', 'limitSeen'
] as const

/** The head's length (with the format number) below which it is never cut. */
export const RECORD_HEAD_KEPT = RECORD_HEAD.indexOf('controlsSeen') + 2

/** The format number a compact record's head starts with. */
export const RECORD_FORMAT = 2

/** A limit entry's key, without the record key's tag, starts so: */
export const LIMIT_TAIL = ':l:'
/** A card control's daily total key, without the record key's tag, starts so: */
export const DAILY_TAIL = ':cd:'

/**
 * The request's fields the journal keeps, by position in a packed meta (append only: a record written with
 * a shorter list reads the same). A field not in it is kept by name after them.
 */
const REQUEST_FIELDS = [
  'customerId', 'urn', 'merchantName', 'terminalId', 'mcc', 'systemTraceAuditNumber', 'cardNetwork', 'channel', 'merchantId',
  'transactionAmount', 'fee', 'transactionReferenceNumber', 'currencyCode', 'last4Digits', 'originalRrn', 'orignialRrn',
  'billingCurrency', 'billingAmount', 'entityId'
] as const
const REQUEST_INDEX = new Map<string, number>(REQUEST_FIELDS.map((f, i) => [f, i]))
/** request fields equal to the record's own value are written as 0 (the values are strings) */
const SAME_AS_RECORD: Record<string, keyof Own> = { urn: 'urn', transactionReferenceNumber: 'reference', last4Digits: 'last4', transactionAmount: 'debit' }
/** meta fields equal to the request's field of the same name are written as 0 */
const FROM_REQUEST = ['transactionAmount', 'currencyCode', 'channel'] as const
const HIT_KEYS = ['ruleId', 'code', 'mode', 'values'] as const
const LIMIT_KEYS = ['ruleId', 'mode', 'values'] as const
const META_KNOWN = new Set(['rulesVersion', 'shadowHits', 'transactionAmount', 'currencyCode', 'channel', 'request', 'decline', 'limits'])

/** What a record says itself, which its request's fields are written against */
interface Own { urn: string, reference: string, last4: string, debit: string }

/** An object with exactly these keys in this order as an array of their values; anything else as it is. */
function packExact (o: unknown, keys: readonly string[]): unknown {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return o
  const ks = Object.keys(o)
  if (ks.length !== keys.length || ks.some((k, i) => k !== keys[i])) return o
  return keys.map((k) => (o as Record<string, unknown>)[k])
}

function unpackExact (v: unknown, keys: readonly string[]): unknown {
  if (!Array.isArray(v)) return v
  return Object.fromEntries(keys.map((k, i) => [k, v[i]]))
}

function trimNulls (a: unknown[]): unknown[] {
  let n = a.length
  while (n > 0 && (a[n - 1] === null || a[n - 1] === undefined)) n--
  return a.length === n ? a : a.slice(0, n)
}

// packRequest and packMeta run once per decision: loops over the keys and arrays filled in order, no
// entries, maps or spreads of arrays made for the moment
function packRequest (req: Record<string, string>, own: Own): unknown[] {
  const out: unknown[] = []
  let extra: Record<string, string> | null = null
  for (const k in req) {
    const v = req[k] as string
    const i = REQUEST_INDEX.get(k)
    // a field out of the list's order is kept by name, so the object reads back in the order it had
    if (i === undefined || extra !== null || out.length > i) {
      extra ??= {}
      extra[k] = v
      continue
    }
    while (out.length < i) out.push(null)
    const same = SAME_AS_RECORD[k]
    out.push(same !== undefined && own[same] === v ? 0 : v)
  }
  if (extra !== null) out.push(extra)
  return out
}

/** meta's field f, or 0 when it is the request's field of the same name (FROM_REQUEST) */
function fromRequest (m: Record<string, unknown>, req: Record<string, string> | undefined, f: typeof FROM_REQUEST[number]): unknown {
  const v = m[f]
  if (v === undefined) return null
  return req !== undefined && req[f] === v ? 0 : v
}

function unpackRequest (packed: unknown[], own: Own): Record<string, string> {
  const req: Record<string, string> = {}
  packed.forEach((v, i) => {
    if (v === null) return
    if (typeof v === 'object') {
      Object.assign(req, v)
      return
    }
    const k = REQUEST_FIELDS[i] as string
    const same = SAME_AS_RECORD[k]
    req[k] = v === 0 && same !== undefined ? own[same] : v as string
  })
  return req
}

/**
 * Meta as a positional array: [rulesVersion, shadowHits, transactionAmount, currencyCode, channel, request,
 * decline, limits, the other fields by name]; null for a field left out. Lossless: reads back as the same
 * object, keys in the order the pipeline writes them.
 */
export function packMeta (meta: DecisionMeta, own: Own): unknown[] {
  const m = meta as unknown as Record<string, unknown>
  const req = m.request as Record<string, string> | undefined
  let rest: Record<string, unknown> | null = null
  for (const k in m) {
    if (META_KNOWN.has(k) || m[k] === undefined) continue
    rest ??= {}
    rest[k] = m[k]
  }
  const out: unknown[] = [
    m.rulesVersion ?? null,
    Array.isArray(m.shadowHits) ? m.shadowHits.map((h) => packExact(h, HIT_KEYS)) : (m.shadowHits ?? null),
    fromRequest(m, req, 'transactionAmount'), fromRequest(m, req, 'currencyCode'), fromRequest(m, req, 'channel'),
    req === undefined ? null : packRequest(req, own),
    m.decline === undefined ? null : packExact(m.decline, HIT_KEYS),
    Array.isArray(m.limits) ? m.limits.map((l) => packExact(l, LIMIT_KEYS)) : (m.limits ?? null),
    rest
  ]
  return trimNulls(out)
}

export function unpackMeta (p: unknown[], own: Own): DecisionMeta {
  const m: Record<string, unknown> = {}
  const req = Array.isArray(p[5]) ? unpackRequest(p[5], own) : undefined
  if (p[0] != null) m.rulesVersion = p[0]
  if (p[1] != null) m.shadowHits = Array.isArray(p[1]) ? p[1].map((h) => unpackExact(h, HIT_KEYS)) : p[1]
  FROM_REQUEST.forEach((f, i) => {
    const v = p[2 + i]
    if (v != null) m[f] = v === 0 && req !== undefined ? req[f] : v
  })
  if (req !== undefined) m.request = req
  if (p[6] != null) m.decline = unpackExact(p[6], HIT_KEYS) as RuleHit
  if (p[7] != null) m.limits = Array.isArray(p[7]) ? p[7].map((l) => unpackExact(l, LIMIT_KEYS)) : p[7]
  if (p[8] != null) Object.assign(m, p[8])
  return m as unknown as DecisionMeta
}

/**
 * The request's side of a compact record (its rest), sent by Node with the authorize and abandon calls and
 * kept by the scripts as it is: `[last4, deadline - arrival ms, packed meta or null]`.
 */
export function recordRest (own: Own, arrivedAtMs: number, deadlineAtMs: number, meta: DecisionMeta | null): string {
  return JSON.stringify(meta === null
    ? [own.last4, deadlineAtMs - arrivedAtMs]
    : [own.last4, deadlineAtMs - arrivedAtMs, packMeta(meta, own)])
}

/**
 * The meta in a record's rest (recordRest's text), or null when it has none. The decision.created event
 * carries the same rest as its extra data (src/store/outbox-entry.ts).
 */
export function metaOfRest (rest: string, own: Own): DecisionMeta | null {
  const r = JSON.parse(rest) as unknown
  return Array.isArray(r) && Array.isArray(r[2]) ? unpackMeta(r[2], own) : null
}

/** The scopes of the customer's keys: `<urn>` and `<urn>:<last4>`, escaped (Keys.limit, Keys.controlDaily). */
function entryScope (own: Own): { urn: string, card: string } {
  const urn = part(own.urn)
  return { urn, card: `${urn}:${part(own.last4)}` }
}

const emptyOrNull = (v: unknown): boolean => v === null || (Array.isArray(v) && v.length === 0)
/** The head's attempt, fingerprint and arrivedAtMs as JSON, which the authorize script puts in as they are. */
export function headOwnPart (attempt: string, fingerprint: string, arrivedAtMs: number): string {
  return `${JSON.stringify(attempt)},${JSON.stringify(fingerprint)},${arrivedAtMs}`
}

/**
 * The decision.created event's reference, last4, debit and arrivedAtMs as JSON object members, which the
 * authorize script puts in the event's data as they are (createdEventOf names all of its fields).
 */
export function eventOwnPart (input: { reference: string, last4: string, debitAmount: number, nowMs: number }): string {
  return `"reference":${JSON.stringify(input.reference)},"last4":${JSON.stringify(input.last4)},"debit":"${input.debitAmount}","arrivedAtMs":${input.nowMs}`
}

/** The head's limit entries (JSON) of an approval counted in these limits' windows: `<rule>:<per>` each. */
export function limitTails (limits: ReadonlyArray<Pick<LimitCheck, 'ruleId' | 'per'>>): string {
  return limits.length === 0 ? '[]' : JSON.stringify(limits.map((l) => `${part(l.ruleId)}:${l.per}`))
}

/** The head's daily totals (JSON) of an approval counted in these controls' totals of the day: `<kind>:<day>` each. */
export function dailyTails (controls: ReadonlyArray<Pick<ControlDefault, 'kind'>>, day: string): string {
  return controls.length === 0 ? '[]' : JSON.stringify(controls.map((d) => `${d.kind}:${day}`))
}

const list = <T>(v: unknown): T[] => (Array.isArray(v) ? v as T[] : [])
const orNull = <T>(v: unknown): T | null => (v === undefined ? null : v as T)

/** A stored record, in either format, in its normal form; `key` is the record's key (urn, reference, tag). */
export function decodeRecord (key: string, raw: string): DecisionRecord {
  if (raw.startsWith('{')) return normalizeRecord(JSON.parse(raw) as Record<string, unknown>)
  const nl = raw.indexOf('\n')
  const head = JSON.parse(raw.slice(0, nl)) as unknown[]
  const rest = JSON.parse(raw.slice(nl + 1)) as unknown[]
  if (head[0] !== RECORD_FORMAT) throw new Error(`decision record ${key}: unknown format ${String(head[0])}`)
  const h: Record<string, unknown> = {}
  RECORD_HEAD.forEach((f, i) => { h[f] = head[i + 1] })
  const { tag, urn, reference } = decisionKeyParts(key)
  const own: Own = { urn, reference, last4: rest[0] as string, debit: h.debit as string }
  const scope = entryScope(own)
  const held = h.held as string
  const reversal = h.reversal !== null && typeof h.reversal === 'object'
    ? { amount: String((h.reversal as Record<string, unknown>).amount), atMs: Number((h.reversal as Record<string, unknown>).atMs) }
    : null
  const seen = typeof h.controlsSeen === 'string'
    ? Object.fromEntries(h.controlsSeen.split(';').map((c) => {
      const [kind, e, p, d] = c.split('|') as [string, string, string, string]
      return [kind, { e, p, d }]
    }))
    : null
  const rec: DecisionRecord = {
    urn,
    reference,
    last4: own.last4,
    attempt: h.attempt as string,
    fingerprint: h.fingerprint as string,
    arrivedAtMs: h.arrivedAtMs as number,
    deadlineAtMs: (h.arrivedAtMs as number) + (rest[1] as number),
    decidedAtMs: (h.arrivedAtMs as number) + (h.decidedAtMs as number),
    code: h.code as DecisionRecord['code'],
    reason: h.reason as DecisionRecord['reason'],
    ruleId: typeof h.ruleId === 'string' ? h.ruleId : null,
    debit: h.debit as string,
    held,
    released: h.released as string,
    shadowLimitHits: list<string>(h.shadowLimitHits),
    limitEntries: list<string>(h.limitEntries).map((t) => [`${tag}${LIMIT_TAIL}${t}:${t.endsWith(':card') ? scope.card : scope.urn}`, `${held}|${reference}`]),
    answeredOnDeadline: h.answeredOnDeadline === 1,
    decidedCode: typeof h.decidedCode === 'string' ? h.decidedCode as DecisionRecord['decidedCode'] : null,
    reversal,
    meta: Array.isArray(rest[2]) ? unpackMeta(rest[2], own) : null,
    controlEntries: list<string>(h.controlEntries).map((t) => [`${tag}${DAILY_TAIL}${scope.card}:${t}`, held]),
    control: controlHitOf(h.control) as ControlHit | null,
    customerStatus: orNull(h.customerStatus),
    cardStatus: orNull(h.cardStatus),
    availableSeen: orNull(h.availableSeen),
    limitSeen: h.limitSeen !== null && typeof h.limitSeen === 'object' ? h.limitSeen as DecisionRecord['limitSeen'] : null,
    controlsSeen: seen
  }
  if (typeof h.attemptArrivedAtMs === 'number') rec.attemptArrivedAtMs = h.attemptArrivedAtMs
  return rec
}

/**
 * A record in the compact format, as the scripts write it (the scripts build the head themselves; this is
 * for tools that store records directly, e.g. the journal bench, and for tests of the format).
 */
export function encodeRecord (key: string, rec: DecisionRecord): string {
  const { tag } = decisionKeyParts(key)
  const own: Own = { urn: rec.urn, reference: rec.reference, last4: rec.last4, debit: rec.debit }
  const scope = entryScope(own)
  const tail = (k: string, infix: string, drop: (t: string) => string): string => {
    const t = k.startsWith(tag + infix) ? drop(k.slice(tag.length + infix.length)) : null
    if (t === null) throw new Error(`entry key ${k} is not of record ${key}`)
    return t
  }
  const limitTail = (t: string): string => {
    const own = t.split(':').slice(0, 2).join(':')
    if (`${own}:${own.endsWith(':card') ? scope.card : scope.urn}` !== t) throw new Error(`limit key tail ${t} is not of record ${key}`)
    return own
  }
  const dailyTail = (t: string): string => {
    if (!t.startsWith(`${scope.card}:`)) throw new Error(`daily total key tail ${t} is not of record ${key}`)
    return t.slice(scope.card.length + 1)
  }
  const h: Record<string, unknown> = {
    ...rec,
    ruleId: rec.ruleId,
    decidedAtMs: rec.decidedAtMs - rec.arrivedAtMs,
    answeredOnDeadline: rec.answeredOnDeadline ? 1 : 0,
    limitEntries: rec.limitEntries.map(([k]) => tail(k, LIMIT_TAIL, limitTail)),
    controlEntries: rec.controlEntries.map(([k]) => tail(k, DAILY_TAIL, dailyTail)),
    attemptArrivedAtMs: rec.attemptArrivedAtMs ?? null,
    controlsSeen: rec.controlsSeen == null ? null : Object.entries(rec.controlsSeen).map(([kind, s]) => `${kind}|${s.e}|${s.p}|${s.d}`).join(';')
  }
  const head = [RECORD_FORMAT, ...RECORD_HEAD.map((f) => h[f] ?? null)]
  while (head.length > RECORD_HEAD_KEPT && emptyOrNull(head[head.length - 1])) head.pop()
  return `${JSON.stringify(head)}\n${recordRest(own, rec.arrivedAtMs, rec.deadlineAtMs, rec.meta)}`
}
