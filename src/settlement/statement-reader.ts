// Reads a statement file line by line, streaming (a million lines in bounded memory): extauth-v1 (NDJSON, a
// header line then one posting a line) or a CSV through a named map. Every line is checked; a bad one is
// named with its line number and why.
import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { parse } from 'csv-parse'
import { POSTING_TYPES, type Posting, type PostingType, type StatementHeader } from './types.js'
import type { StatementMap } from './statement-maps.js'

export type StatementItem =
  | { line: number, header: StatementHeader }
  | { line: number, posting: Posting }
  | { line: number, error: string }

const PLATFORM_ID = /^[A-Za-z0-9._:-]{1,64}$/
const STATEMENT_ID = /^[A-Za-z0-9._:-]{1,64}$/
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/
const POSTING_FIELDS = new Set(['platformId', 'type', 'reference', 'urn', 'last4', 'amount', 'currency', 'postedAt'])
/** amounts stay far below 2^53 (MAX_BALANCE) */
const AMOUNT_DIGITS_MAX = 15

export function isIsoTime (s: unknown): s is string {
  return typeof s === 'string' && ISO_TIME.test(s) && !Number.isNaN(Date.parse(s))
}

export function isStatementId (s: unknown): s is string {
  return typeof s === 'string' && STATEMENT_ID.test(s)
}

/** A posting's fields checked, or the first reason it is not one. */
export function checkPosting (o: Record<string, unknown>): Posting | string {
  for (const k of Object.keys(o)) if (!POSTING_FIELDS.has(k)) return `unknown field "${k}"`
  const str = (k: string): string | null => typeof o[k] === 'string' ? o[k] : null
  const platformId = str('platformId')
  if (platformId === null || !PLATFORM_ID.test(platformId)) return 'platformId must be 1 to 64 letters, digits or ._:-'
  const type = str('type')
  if (type === null || !(POSTING_TYPES as readonly string[]).includes(type)) return `type must be one of ${POSTING_TYPES.join(', ')}`
  const reference = str('reference')
  if (reference === null || reference.length < 1 || reference.length > 50) return 'reference must be 1 to 50 characters'
  const urn = str('urn')
  if (urn === null || urn.length < 1 || urn.length > 20) return 'urn must be 1 to 20 characters'
  const last4 = o.last4 === undefined ? '' : str('last4')
  if (last4 === null || (last4 !== '' && !/^\d{4}$/.test(last4))) return 'last4 must be four digits (or left out)'
  const amount = str('amount')
  if (amount === null || !/^\d+$/.test(amount) || amount.length > AMOUNT_DIGITS_MAX || Number(amount) <= 0) return `amount must be a positive whole number of minor units as a digit string (at most ${AMOUNT_DIGITS_MAX} digits)`
  const currency = str('currency')
  if (currency === null || !/^[0-9A-Z]{3}$/.test(currency)) return 'currency must be three digits or letters'
  const postedAt = str('postedAt')
  if (!isIsoTime(postedAt)) return 'postedAt must be an ISO 8601 time'
  return { platformId, type: type as PostingType, reference, urn, last4, amount: Number(amount), currency, postedAt }
}

function checkHeader (o: unknown): StatementHeader | string {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return 'the first line must be {"statement": {"id", "from", "to", "complete"}}'
  const outer = o as Record<string, unknown>
  const inner: unknown = outer.statement
  if (Object.keys(outer).length !== 1 || inner === null || typeof inner !== 'object') return 'the first line must be {"statement": {"id", "from", "to", "complete"}}'
  const s = inner as Record<string, unknown>
  for (const k of Object.keys(s)) if (!['id', 'from', 'to', 'complete'].includes(k)) return `statement: unknown field "${k}"`
  if (!isStatementId(s.id)) return 'statement.id must be 1 to 64 letters, digits or ._:-'
  if (!isIsoTime(s.from) || !isIsoTime(s.to)) return 'statement.from and statement.to must be ISO 8601 times'
  if (Date.parse(s.to) < Date.parse(s.from)) return 'statement.to is before statement.from'
  if (typeof s.complete !== 'boolean') return 'statement.complete must be true or false'
  return { id: s.id, from: s.from, to: s.to, complete: s.complete }
}

/** extauth-v1: blank lines are skipped; the header must come first. */
export async function * readExtauthV1 (file: string): AsyncGenerator<StatementItem> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })
  let n = 0
  let sawHeader = false
  for await (const text of lines) {
    n++
    if (text.trim() === '') continue
    let o: unknown
    try {
      o = JSON.parse(text)
    } catch {
      yield { line: n, error: 'not JSON' }
      continue
    }
    if (!sawHeader) {
      sawHeader = true
      const h = checkHeader(o)
      yield typeof h === 'string' ? { line: n, error: h } : { line: n, header: h }
      continue
    }
    if (o === null || typeof o !== 'object' || Array.isArray(o)) {
      yield { line: n, error: 'a posting must be a JSON object' }
      continue
    }
    const p = checkPosting(o as Record<string, unknown>)
    yield typeof p === 'string' ? { line: n, error: p } : { line: n, posting: p }
  }
  if (!sawHeader) yield { line: 1, error: 'empty statement: the first line must be {"statement": {...}}' }
}

/** "12.50" with 2 decimals -> 1250; null when it is not such an amount */
export function minorUnits (text: string, decimals: number): number | null {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (m === null) return null
  const frac = m[2] ?? ''
  if (frac.length > decimals) return null
  const digits = (m[1] as string) + frac.padEnd(decimals, '0')
  const trimmed = digits.replace(/^0+(?=\d)/, '')
  if (trimmed.length > AMOUNT_DIGITS_MAX) return null
  return Number(trimmed)
}

/** A CSV with a header row, read through a map; the statement's header comes from the caller (`header`). */
export async function * readCsv (file: string, map: StatementMap, header: StatementHeader): AsyncGenerator<StatementItem> {
  const parser = createReadStream(file).pipe(parse({
    delimiter: map.delimiter, columns: true, info: true, skip_empty_lines: true, trim: true, bom: true, relax_column_count: false
  }))
  yield { line: 0, header }
  const c = map.columns
  try {
    for await (const rec of parser as AsyncIterable<{ record: Record<string, string | undefined>, info: { lines: number } }>) {
      const row = rec.record
      const line = rec.info.lines
      const missing = [c.platformId, c.type, c.reference, c.urn, c.amount, c.postedAt, c.last4, c.currency].find((col) => col !== undefined && row[col] === undefined)
      if (missing !== undefined) {
        yield { line, error: `no column "${missing}"` }
        continue
      }
      const word = row[c.type] as string
      const type = map.types[word]
      if (type === undefined) {
        yield { line, error: `type "${word}" is not in the map's types` }
        continue
      }
      const amount = minorUnits(row[c.amount] as string, map.decimals)
      if (amount === null || amount <= 0) {
        yield { line, error: `amount "${row[c.amount] ?? ''}" is not a positive amount with at most ${map.decimals} decimals` }
        continue
      }
      const p = checkPosting({
        platformId: row[c.platformId], type, reference: row[c.reference], urn: row[c.urn],
        ...(c.last4 !== undefined && row[c.last4] !== '' ? { last4: row[c.last4] } : {}),
        amount: String(amount), currency: c.currency !== undefined ? row[c.currency] : (map.currency ?? ''), postedAt: row[c.postedAt]
      })
      yield typeof p === 'string' ? { line, error: p } : { line, posting: p }
    }
  } catch (err) {
    const e = err as Error & { lines?: number }
    yield { line: e.lines ?? 0, error: `not readable as CSV: ${e.message}` }
  }
}
