// The replay of an NDJSON journal spread over threads, one share of the customers each: this thread replays the
// first share, worker threads (shard-worker.ts) the others; merged into one report. The report is the same as a
// single thread's: shares are merged in arrival order.
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { CompiledRuleSet } from '../rules/types.js'
import { loadCheckedRules } from '../rules/load.js'
import type { CheckedRule } from '../rules/validate.js'
import { mergeShards, warmUpFromMs, type BacktestResult } from './engine.js'
import { JournalLineError, NdjsonJournal } from './ndjson-source.js'
import { ShardReplay, type ShardResult } from './shard.js'
import { replayShare, type ShardWorkerData, type ShardWorkerMessage } from './shard-worker.js'

export interface ParallelBacktestOptions {
  file: string
  candidate: CompiledRuleSet
  candidateDir: string
  baseline: CompiledRuleSet
  baselineDir: string
  baselineMode: 'given' | 'recorded'
  fromMs: number
  toMs: number
  timezone: string
  defaultCurrency?: string
  workers: number
  samplesMax?: number
  changedMax?: number
  onProgress?: (p: { read: number, atMs: number }) => void
  progressEvery?: number
}

/** Threads by default (this one and workers): one per processor, at most 4 (each reads the whole file). */
export function defaultWorkers (): number {
  return Math.min(4, availableParallelism())
}

const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './shard-worker.ts' : './shard-worker.js', import.meta.url)

/**
 * The worker's entry. Run from TypeScript sources (tsx), a worker starts without the main thread's loader, and
 * Node refuses a `.ts` entry before any `--import` hook could help: the worker registers tsx itself first.
 */
function workerBoot (): string {
  const entry = JSON.stringify(workerUrl.href)
  if (!import.meta.url.endsWith('.ts')) return `import(${entry})`
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'))
  return `import(${tsx}).then((m) => { m.register(); return import(${entry}) })`
}

export async function runBacktestParallel (o: ParallelBacktestOptions): Promise<BacktestResult> {
  const samplesMax = o.samplesMax ?? 5
  const changedMax = o.changedMax ?? 10_000
  const progressEvery = o.progressEvery ?? 100_000
  const warmFromMs = warmUpFromMs([o.baseline, o.candidate], o.fromMs, o.timezone)
  const shares = o.workers
  const read = new Array<number>(shares).fill(0)
  let reported = 0
  const progress = (share: number, n: number, atMs: number): void => {
    read[share] = n
    const total = read.reduce((a, b) => a + b, 0)
    if (total >= reported + progressEvery) {
      reported = total - (total % progressEvery)
      o.onProgress?.({ read: total, atMs })
    }
  }
  const common = {
    file: o.file, shares, fromMs: o.fromMs, warmFromMs, toMs: o.toMs, timezone: o.timezone, samplesMax, changedMax,
    progressEvery: Math.max(1, Math.floor(progressEvery / shares)),
    ...(o.defaultCurrency !== undefined ? { defaultCurrency: o.defaultCurrency } : {})
  }

  // The workers get the rule sets checked here, as plain data to compile: they start without the validator.
  // Read again from their directories, they must be the sets loaded: a set edited since is refused.
  const rules = shares > 1 ? await Promise.all([loadCheckedRules(o.candidateDir), loadCheckedRules(o.baselineDir)]) : null
  if (rules !== null) {
    const [candidate, baseline] = rules
    if (!candidate.ok || !baseline.ok || candidate.version !== o.candidate.version || baseline.version !== o.baseline.version) {
      throw new Error('a rule set changed while the backtest started; run it again')
    }
  }
  const workers: Worker[] = []
  const one = async (share: number): Promise<ShardResult> => {
    const [candidate, baseline] = rules as [{ rules: CheckedRule[] }, { rules: CheckedRule[] }]
    const data: ShardWorkerData = {
      ...common, share, candidateRules: candidate.rules, baselineRules: baseline.rules,
      candidateVersion: o.candidate.version, baselineVersion: o.baseline.version, baselineMode: o.baselineMode
    }
    const worker = new Worker(workerBoot(), { eval: true, workerData: data })
    workers.push(worker)
    return await new Promise<ShardResult>((resolve, reject) => {
      let settled = false
      worker.on('message', (m: ShardWorkerMessage) => {
        if (m.type === 'progress') {
          progress(share, m.read, m.atMs)
        } else if (m.type === 'done') {
          settled = true
          resolve(m.result)
        } else {
          settled = true
          if (m.name === 'JournalLineError') reject(new JournalLineError(m.file ?? o.file, m.line ?? 0, m.message.replace(/^[^:]*:\d+: /, '')))
          else reject(Object.assign(new Error(m.message), m.code !== undefined ? { code: m.code } : {}))
        }
      })
      worker.on('error', (err) => { if (!settled) { settled = true; reject(err) } })
      worker.on('exit', (code) => { if (!settled) { settled = true; reject(new Error(`a backtest worker exited with code ${code}`)) } })
    }).finally(() => { void worker.terminate() })
  }

  const earliestMs = await new NdjsonJournal(o.file).earliestMs()
  // The other shares start in workers; this thread, its rule sets at hand, replays the first one meanwhile, and
  // stops at once if a worker fails.
  let failure: { err: unknown } | null = null
  const others = Array.from({ length: shares - 1 }, async (_, i) => await one(i + 1).catch((err: unknown) => {
    failure ??= { err }
    throw err
  }))
  for (const p of others) p.catch(() => {})
  try {
    const shard = new ShardReplay({ candidate: o.candidate, baseline: o.baseline, baselineMode: o.baselineMode, ...common })
    const mine = await replayShare(shard, { ...common, share: 0 }, (n, atMs) => { progress(0, n, atMs) }, () => failure)
    const results = [mine, ...await Promise.all(others)]
    const report = mergeShards(results, { candidate: o.candidate, baseline: o.baseline, fromMs: o.fromMs, toMs: o.toMs, warmFromMs, earliestMs, samplesMax, changedMax })
    return { report, baselineVersion: o.baseline.version, candidateVersion: o.candidate.version, warmFromMs, read: results.reduce((n, r) => n + r.read, 0) }
  } finally {
    for (const w of workers) void w.terminate()
  }
}
