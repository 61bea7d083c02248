// One page of exceptions, newest first, filtered; the cursor is the last item's creation time and id.
import type { ExceptionFilter, ReconException } from './types.js'

export function pageOf (all: ReconException[], f: ExceptionFilter): { items: ReconException[], nextCursor: string | null } {
  let after: { at: number, id: string } | null = null
  if (f.cursor !== undefined && f.cursor !== '') {
    const sep = f.cursor.indexOf('_')
    after = { at: Number(f.cursor.slice(0, sep)), id: f.cursor.slice(sep + 1) }
  }
  const items = all
    .filter((x) => (f.status === undefined || x.status === f.status) && (f.kind === undefined || x.kind === f.kind) && (f.urn === undefined || x.urn === f.urn))
    .sort((a, b) => b.createdAtMs !== a.createdAtMs ? b.createdAtMs - a.createdAtMs : (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .filter((x) => after === null || x.createdAtMs < after.at || (x.createdAtMs === after.at && x.id < after.id))
  const page = items.slice(0, f.limit)
  const last = page[page.length - 1]
  return { items: page, nextCursor: items.length > f.limit && last !== undefined ? `${last.createdAtMs}_${last.id}` : null }
}
