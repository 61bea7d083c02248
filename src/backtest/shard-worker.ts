// A worker thread replaying the customers of one share of an NDJSON journal (the main thread replays the first
// share itself with replayShare). Every worker reads the whole file
// (from the page cache after the first) but decodes and parses only the lines of its customers, found in bytes:
// parsing is much of a replay's cost, and customers share no window or daily total, so shares replay
// independently.
import { parentPort, workerData } from 'node:worker_threads'
import { compileRuleSet } from '../rules/compile.js'
import type { CheckedRule } from '../rules/validate.js'
import { NdjsonJournal } from './ndjson-source.js'
import type { JournalEntry } from '../domain/journal.js'
import { ShardReplay, type ShardResult } from './shard.js'

export interface ShardWorkerData {
  file: string
  share: number
  shares: number
  /**
   * The rule sets as the main thread checked them (plain data, compiled here): a worker does not load the
   * rule files' validator, much of its start otherwise.
   */
  candidateRules: CheckedRule[]
  baselineRules: CheckedRule[]
  candidateVersion: string
  baselineVersion: string
  baselineMode: 'given' | 'recorded'
  fromMs: number
  warmFromMs: number
  toMs: number
  timezone: string
  defaultCurrency?: string
  samplesMax: number
  changedMax: number
  progressEvery: number
}

export type ShardWorkerMessage =
  | { type: 'progress', read: number, atMs: number }
  | { type: 'done', result: ShardReplay['result'] }
  | { type: 'error', name: string, message: string, file?: string, line?: number, code?: string }

/**
 * Replays the share `d.share` of the file into `shard`, calling `progress` every `d.progressEvery` entries;
 * stops with the error `failed` returns once it returns one.
 */
export async function replayShare (shard: ShardReplay, d: Pick<ShardWorkerData, 'file' | 'share' | 'shares' | 'warmFromMs' | 'toMs' | 'progressEvery'>,
  progress: (read: number, atMs: number) => void, failed: () => { err: unknown } | null = () => null): Promise<ShardResult> {
  const journal = new NdjsonJournal(d.file)
  let next = d.progressEvery
  for await (const b of journal.readBatches(d.warmFromMs, d.toMs, { share: d.share, shares: d.shares })) {
    const f = failed()
    if (f !== null) throw f.err
    for (let i = 0; i < b.entries.length; i++) shard.push(b.entries[i] as JournalEntry, b.atMs[i] as number)
    if (shard.result.read >= next && b.atMs.length > 0) {
      next += d.progressEvery
      progress(shard.result.read, b.atMs[b.atMs.length - 1] as number)
    }
  }
  return shard.result
}

const port = parentPort
if (port !== null) {
  const d = workerData as ShardWorkerData
  try {
    const candidate = compileRuleSet(d.candidateRules, { version: d.candidateVersion, timezone: d.timezone })
    const baseline = compileRuleSet(d.baselineRules, { version: d.baselineVersion, timezone: d.timezone })
    const shard = new ShardReplay({
      candidate, baseline, baselineMode: d.baselineMode, fromMs: d.fromMs, timezone: d.timezone,
      samplesMax: d.samplesMax, changedMax: d.changedMax, ...(d.defaultCurrency !== undefined ? { defaultCurrency: d.defaultCurrency } : {})
    })
    const result = await replayShare(shard, d, (read, atMs) => { port.postMessage({ type: 'progress', read, atMs } satisfies ShardWorkerMessage) })
    port.postMessage({ type: 'done', result } satisfies ShardWorkerMessage)
  } catch (err) {
    const e = err as Error & { file?: string, line?: number, code?: string }
    port.postMessage({ type: 'error', name: e.name, message: e.message, ...(e.file !== undefined ? { file: e.file } : {}), ...(e.line !== undefined ? { line: e.line } : {}), ...(e.code !== undefined ? { code: e.code } : {}) } satisfies ShardWorkerMessage)
  }
}
