// extauth's own count of the answers that were not decisions (shed under overload, deadline, store errors),
// read from GET /metrics on the admin listener before and after a run, so a failed run says why.
import { request } from 'undici'

export const WATCHED = ['extauth_shed_total', 'extauth_deadline_hits_total', 'extauth_store_errors_total'] as const
export type Watched = Record<typeof WATCHED[number], number>

/** Sums every series of the watched counters; null when /metrics cannot be read. */
export async function scrape (adminUrl: string): Promise<Watched | null> {
  try {
    const res = await request(`${adminUrl}/metrics`, { headersTimeout: 2000, bodyTimeout: 2000 })
    const text = await res.body.text()
    if (res.statusCode !== 200) return null
    const out = Object.fromEntries(WATCHED.map((n) => [n, 0])) as Watched
    for (const line of text.split('\n')) {
      for (const name of WATCHED) {
        if (!line.startsWith(name + ' ') && !line.startsWith(name + '{')) continue
        const value = Number(line.slice(line.lastIndexOf(' ') + 1))
        if (!Number.isNaN(value)) out[name] += value
      }
    }
    return out
  } catch {
    return null
  }
}

export function delta (before: Watched | null, after: Watched | null): string | null {
  if (before === null || after === null) return null
  return WATCHED.map((n) => `${n.replace(/^extauth_|_total$/g, '')} ${after[n] - before[n]}`).join('  ')
}
