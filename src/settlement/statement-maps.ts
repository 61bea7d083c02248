// Named maps for statements in another layout than extauth-v1 (STATEMENT_MAPS_FILE): a bank's CSV with its
// own column names, type words and decimal amounts. docs/operations/settlement.md has an example.
import { readFileSync } from 'node:fs'
import { POSTING_TYPES, type PostingType } from './types.js'

export interface StatementMap {
  format: 'csv'
  /** one character; default ',' */
  delimiter: string
  /** the CSV's column for each field of a posting (last4 and currency may be left out) */
  columns: { platformId: string, type: string, reference: string, urn: string, amount: string, postedAt: string, last4?: string, currency?: string }
  /** the file's type words -> ours */
  types: Record<string, PostingType>
  /** digits after the decimal point of the file's amounts (2: "12.50" is 1250 minor units); 0: minor units */
  decimals: number
  /** the currency when the file has no column for it */
  currency?: string
}

const REQUIRED_COLUMNS = ['platformId', 'type', 'reference', 'urn', 'amount', 'postedAt'] as const
const OPTIONAL_COLUMNS = ['last4', 'currency'] as const

function check (name: string, raw: unknown): StatementMap {
  const bad = (why: string): never => { throw new Error(`map "${name}": ${why}`) }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad('must be an object')
  const m = raw as Record<string, unknown>
  for (const k of Object.keys(m)) if (!['format', 'delimiter', 'columns', 'types', 'decimals', 'currency'].includes(k)) bad(`unknown field "${k}"`)
  if (m.format !== 'csv') bad('format must be "csv"')
  const delimiter = m.delimiter ?? ','
  if (typeof delimiter !== 'string' || delimiter.length !== 1) bad('delimiter must be one character')
  const cols: unknown = m.columns
  if (typeof cols !== 'object' || cols === null) bad('columns must name the CSV column of each field')
  const c = cols as Record<string, unknown>
  for (const k of Object.keys(c)) if (!([...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS] as string[]).includes(k)) bad(`columns: unknown field "${k}"`)
  for (const k of REQUIRED_COLUMNS) if (typeof c[k] !== 'string' || c[k] === '') bad(`columns.${k} must name a column`)
  for (const k of OPTIONAL_COLUMNS) if (c[k] !== undefined && (typeof c[k] !== 'string' || c[k] === '')) bad(`columns.${k} must name a column`)
  const types: unknown = m.types
  if (typeof types !== 'object' || types === null || Object.keys(types).length === 0) bad('types must map the file\'s type words to ours')
  for (const [word, t] of Object.entries(types as Record<string, unknown>)) {
    if (!(POSTING_TYPES as readonly unknown[]).includes(t)) bad(`types.${word}: "${String(t)}" is not one of ${POSTING_TYPES.join(', ')}`)
  }
  const decimals = m.decimals ?? 0
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 6) bad('decimals must be a whole number from 0 to 6')
  if (m.currency !== undefined && (typeof m.currency !== 'string' || !/^[0-9A-Z]{3}$/.test(m.currency))) bad('currency must be three digits or letters')
  return {
    format: 'csv',
    delimiter: delimiter as string,
    columns: c as StatementMap['columns'],
    types: types as Record<string, PostingType>,
    decimals: decimals as number,
    ...(typeof m.currency === 'string' ? { currency: m.currency } : {})
  }
}

/** The file's maps by name; throws naming the map and the field that is wrong. */
export function loadStatementMaps (file: string): Record<string, StatementMap> {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`)
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${file}: must be an object of named maps`)
  const out: Record<string, StatementMap> = {}
  for (const [name, m] of Object.entries(raw as Record<string, unknown>)) {
    if (name === '$schema') continue
    if (!/^[a-z0-9][a-z0-9-]{0,39}$/.test(name)) throw new Error(`${file}: map name "${name}" must be lower-case letters, digits and -`)
    out[name] = check(name, m)
  }
  return out
}
