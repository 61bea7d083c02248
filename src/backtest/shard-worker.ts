// A worker thread replaying the customers of one share of an NDJSON journal. Every worker reads the whole file
// (from the page cache after the first) but parses only the lines of its customers: parsing is most of a
// replay's cost, and customers share no window or daily total, so shares replay independently.
import { parentPort, workerData } from 'node:worker_threads'
import { loadRuleSet } from '../rules/load.js'
import { NdjsonJournal, shareOfLine } from './ndjson-source.js'
import { ShardReplay } from './shard.js'

export interface ShardWorkerData {
  file: string
  share: number
  shares: number
  candidateDir: string
  baselineDir: string
  /** the versions the main thread loaded: a set edited since is refused rather than replayed */
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

const port = parentPort
if (port !== null) {
  const d = workerData as ShardWorkerData
  try {
    const candidate = await loadRuleSet(d.candidateDir, { timezone: d.timezone })
    const baseline = await loadRuleSet(d.baselineDir, { timezone: d.timezone })
    if (!candidate.ok || !baseline.ok || candidate.set.version !== d.candidateVersion || baseline.set.version !== d.baselineVersion) {
      throw new Error('a rule set changed while the backtest started; run it again')
    }
    const shard = new ShardReplay({
      candidate: candidate.set, baseline: baseline.set, baselineMode: d.baselineMode, fromMs: d.fromMs, timezone: d.timezone,
      samplesMax: d.samplesMax, changedMax: d.changedMax, ...(d.defaultCurrency !== undefined ? { defaultCurrency: d.defaultCurrency } : {})
    })
    const journal = new NdjsonJournal(d.file)
    let next = d.progressEvery
    for await (const b of journal.readBatches(d.warmFromMs, d.toMs, (text) => shareOfLine(text, d.shares) === d.share)) {
      for (let i = 0; i < b.entries.length; i++) shard.push(b.entries[i] as never, b.atMs[i] as number)
      if (shard.result.read >= next && b.atMs.length > 0) {
        next += d.progressEvery
        port.postMessage({ type: 'progress', read: shard.result.read, atMs: b.atMs[b.atMs.length - 1] as number } satisfies ShardWorkerMessage)
      }
    }
    port.postMessage({ type: 'done', result: shard.result } satisfies ShardWorkerMessage)
  } catch (err) {
    const e = err as Error & { file?: string, line?: number, code?: string }
    port.postMessage({ type: 'error', name: e.name, message: e.message, ...(e.file !== undefined ? { file: e.file } : {}), ...(e.line !== undefined ? { line: e.line } : {}), ...(e.code !== undefined ? { code: e.code } : {}) } satisfies ShardWorkerMessage)
  }
}
