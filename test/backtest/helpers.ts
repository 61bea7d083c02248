// Builders for the backtest tests: journal entries, rule directories on disk, and an in-memory source.
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { JournalEntry } from '../../src/domain/journal.js'
import type { BacktestSource } from '../../src/backtest/ndjson-source.js'
import { seededRandom } from '../../src/sim/prng.js'

export const root = fileURLToPath(new URL('../../', import.meta.url))
export const defaultRulesDir = join(root, 'rules')

interface Teardown { teardown: (fn: () => unknown) => void }

export async function tempDir (t: Teardown, name = 'extauth-backtest-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), name))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** A copy of the default rule set with `edit` applied to the named file's text; a null text removes the file. */
export async function editedRules (t: Teardown, edits: Record<string, (text: string) => string | null>): Promise<string> {
  const dir = join(await tempDir(t), 'rules')
  await cp(defaultRulesDir, dir, { recursive: true })
  for (const [name, edit] of Object.entries(edits)) {
    const path = join(dir, name)
    const before = await readFile(path, 'utf8').catch(() => '')
    const after = edit(before)
    if (after === null) await rm(path)
    else await writeFile(path, after)
  }
  return dir
}

export function entry (over: Partial<JournalEntry> & { request: Record<string, string>, arrivedAt: string }): JournalEntry {
  const r = over.request
  return {
    v: 1,
    urn: r.urn as string,
    reference: r.transactionReferenceNumber as string,
    last4: r.last4Digits as string,
    decidedAt: over.arrivedAt,
    code: '00',
    reason: 'approved',
    ruleId: null,
    control: null,
    limit: null,
    availableSeen: null,
    debit: Number(r.billingAmount ?? r.transactionAmount) + Number(r.fee ?? 0),
    shadowHits: [],
    rulesVersion: 'unknown',
    controls: null,
    customerStatus: 'ACTIVE',
    cardStatus: 'ACTIVE',
    answeredOnDeadline: false,
    ...over
  }
}

/** A journal held in memory, as a source that can say how far back it reaches. */
export function memorySource (entries: readonly JournalEntry[]): BacktestSource {
  return {
    async earliestMs () {
      return entries.length === 0 ? null : Date.parse((entries[0] as JournalEntry).arrivedAt)
    },
    async * read (fromMs: number, toMs: number) {
      for (const e of entries) {
        const at = Date.parse(e.arrivedAt)
        if (at >= fromMs && at < toMs) yield e
      }
    }
  }
}

export async function writeNdjson (path: string, entries: readonly JournalEntry[]): Promise<void> {
  await writeFile(path, entries.map(e => JSON.stringify(e) + '\n').join(''))
}

/** A seeded integer in [0, n) (the project's one PRNG: src/sim/prng.ts). */
export function rng (seed: number): (n: number) => number {
  const next = seededRandom(seed)
  return (n) => Math.floor(next() * n)
}
