// SETTLEMENT_MODE, HOLD_EXPIRY, HOLD_EXPIRY_BY_MCC, SETTLEMENT_GRACE, STATEMENT_MAPS_FILE
// (docs/operations/configuration.md, docs/operations/settlement.md), checked once at start-up.
import { loadStatementMaps, type StatementMap } from './statement-maps.js'

export interface SettlementConfig {
  /** final: a 00 debits for good; holds: a 00 places a hold that clearing posts or expiry releases */
  mode: 'final' | 'holds'
  holdExpiryMs: number
  /** MCC ranges with their own expiry, first match wins */
  holdExpiryByMcc: Array<{ from: number, to: number, ms: number }>
  /** an approval younger than this is not yet expected on a statement */
  graceMs: number
  mapsFile: string
  maps: Record<string, StatementMap>
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }
/** the longest hold: a year */
export const HOLD_EXPIRY_MS_MAX = 366 * 86_400_000

/** '7d', '36h', '30m', '5s' in ms; null when it is not one */
export function parseDuration (text: string): number | null {
  const m = /^(\d{1,6})([smhd])$/.exec(text.trim())
  if (m === null) return null
  const ms = Number(m[1]) * (UNIT_MS[m[2] as string] as number)
  return ms > 0 && ms <= HOLD_EXPIRY_MS_MAX ? ms : null
}

export class SettlementConfigError extends Error {
  constructor (readonly variable: string, message: string) {
    super(message)
    this.name = 'SettlementConfigError'
  }
}

/** `3501-3999:31d,7011:31d` */
export function parseExpiryByMcc (text: string): SettlementConfig['holdExpiryByMcc'] {
  const out: SettlementConfig['holdExpiryByMcc'] = []
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const m = /^(\d{4})(?:-(\d{4}))?:(.+)$/.exec(item)
    const ms = m === null ? null : parseDuration(m[3] as string)
    if (m === null || ms === null) throw new SettlementConfigError('HOLD_EXPIRY_BY_MCC', `"${item}" is not <mcc>[-<mcc>]:<duration> (e.g. 3501-3999:31d,7011:31d)`)
    const from = Number(m[1])
    const to = m[2] === undefined ? from : Number(m[2])
    if (to < from) throw new SettlementConfigError('HOLD_EXPIRY_BY_MCC', `"${item}": the range ends before it starts`)
    out.push({ from, to, ms })
  }
  return out
}

export function settlementConfigFromEnv (env: NodeJS.ProcessEnv): SettlementConfig {
  const value = (name: string, def: string): string => (env[name] ?? '').trim() === '' ? def : (env[name] as string).trim()
  const mode = value('SETTLEMENT_MODE', 'final')
  if (mode !== 'final' && mode !== 'holds') throw new SettlementConfigError('SETTLEMENT_MODE', 'must be final or holds')
  const duration = (name: string, def: string): number => {
    const ms = parseDuration(value(name, def))
    if (ms === null) throw new SettlementConfigError(name, 'must be a duration such as 7d, 36h, 30m or 5s (at most 366d)')
    return ms
  }
  const mapsFile = value('STATEMENT_MAPS_FILE', '')
  let maps: Record<string, StatementMap> = {}
  try {
    maps = mapsFile === '' ? {} : loadStatementMaps(mapsFile)
  } catch (err) {
    throw new SettlementConfigError('STATEMENT_MAPS_FILE', (err as Error).message)
  }
  return {
    mode,
    holdExpiryMs: duration('HOLD_EXPIRY', '7d'),
    holdExpiryByMcc: parseExpiryByMcc(value('HOLD_EXPIRY_BY_MCC', '')),
    graceMs: duration('SETTLEMENT_GRACE', '48h'),
    mapsFile,
    maps
  }
}

/** When an approval made at nowMs for this MCC expires, in holds mode; undefined in final mode. */
export function holdExpiryOf (c: Pick<SettlementConfig, 'mode' | 'holdExpiryMs' | 'holdExpiryByMcc'>, mcc: string | undefined, nowMs: number): number | undefined {
  if (c.mode !== 'holds') return undefined
  const code = mcc !== undefined && /^\d{1,10}$/.test(mcc) ? Number(mcc) : null
  const hit = code === null ? undefined : c.holdExpiryByMcc.find((r) => code >= r.from && code <= r.to)
  return nowMs + (hit?.ms ?? c.holdExpiryMs)
}
