// Holds the running rule set and replaces it only with a set that loaded whole. Reloads come from the file
// watcher, SIGHUP and POST /admin/v1/rules/reload (wired by the app); all go through reload(), which runs
// one load at a time so two triggers close together cannot install an older read over a newer one.
import assert from 'node:assert'
import { watch, type FSWatcher } from 'node:fs'
import type { Logger } from 'pino'
import { RulesInvalidError, type RuleError } from './errors.js'
import { loadRuleSet } from './load.js'
import type { CompiledRuleSet } from './types.js'

export { emptyRuleSet } from './compile.js'

export type ReloadResult =
  | { ok: true, version: string, rules: number }
  | { ok: false, errors: RuleError[] }

export interface RulesManagerOptions {
  dir: string
  timezone: string
  log: Logger
  /** quiet time after the last file event before reloading; editors write a file in several steps */
  debounceMs?: number
  clock?: () => number
  /** told of every set installed (metrics) */
  onLoaded?: (set: CompiledRuleSet, loadedAtMs: number) => void
  /** told of every set refused (metrics); the running set is kept */
  onRefused?: (errors: RuleError[]) => void
}

export const debounceMsDefault = 200

export class RulesManager {
  readonly dir: string
  private readonly timezone: string
  private readonly log: Logger
  private readonly debounceMs: number
  private readonly clock: () => number
  private readonly onLoaded?: (set: CompiledRuleSet, loadedAtMs: number) => void
  private readonly onRefused?: (errors: RuleError[]) => void
  private set: CompiledRuleSet | null = null
  private setLoadedAt: number | null = null
  private running: Promise<ReloadResult> | null = null
  private again = false
  private watcher: FSWatcher | null = null
  private timer: NodeJS.Timeout | null = null

  constructor (opts: RulesManagerOptions) {
    assert(typeof opts.dir === 'string' && opts.dir !== '', 'RulesManager: dir is required')
    assert(opts.debounceMs === undefined || (Number.isInteger(opts.debounceMs) && opts.debounceMs >= 0), 'RulesManager: debounceMs must be a non-negative integer')
    this.dir = opts.dir
    this.timezone = opts.timezone
    this.log = opts.log
    this.debounceMs = opts.debounceMs ?? debounceMsDefault
    this.clock = opts.clock ?? Date.now
    if (opts.onLoaded !== undefined) this.onLoaded = opts.onLoaded
    if (opts.onRefused !== undefined) this.onRefused = opts.onRefused
  }

  /** Loads the initial set; throws RulesInvalidError (with `.errors`) when it is refused. */
  async start (): Promise<void> {
    const r = await this.reload()
    if (!r.ok) throw new RulesInvalidError(this.dir, r.errors)
  }

  get current (): CompiledRuleSet {
    assert(this.set !== null, 'RulesManager: start() must succeed before the rule set is used')
    return this.set
  }

  /** Epoch ms at which the running set was installed; null before start(). */
  get loadedAt (): number | null {
    return this.setLoadedAt
  }

  /** Reads the directory again; installs the new set only if it is valid whole. */
  reload (): Promise<ReloadResult> {
    if (this.running !== null) {
      // A change arrived while reading: read once more afterwards so the last edit always wins.
      this.again = true
      return this.running
    }
    const run = async (): Promise<ReloadResult> => {
      let r: ReloadResult
      do {
        this.again = false
        r = await this.loadOnce()
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- reload() sets it while loadOnce() is awaited, which the type checker's narrowing does not see
      } while (this.again)
      return r
    }
    this.running = run().finally(() => { this.running = null })
    return this.running
  }

  private async loadOnce (): Promise<ReloadResult> {
    const r = await loadRuleSet(this.dir, { timezone: this.timezone })
    if (!r.ok) {
      this.log.error({ dir: this.dir, errors: r.errors, keptVersion: this.set?.version ?? null }, 'rule set refused; the running set is kept')
      this.onRefused?.(r.errors)
      return { ok: false, errors: r.errors }
    }
    const previous = this.set?.version ?? null
    this.set = r.set
    this.setLoadedAt = this.clock()
    this.onLoaded?.(r.set, this.setLoadedAt)
    const count = r.set.rules.length
    this.log.info({ dir: this.dir, version: r.set.version, previousVersion: previous, rules: count, files: r.files, needsRisk: r.set.needsRisk }, 'rule set loaded')
    if (count === 0) this.log.warn({ dir: this.dir }, 'rule set is empty: no rule will decline')
    if (r.warnings.length > 0) this.log.warn({ dir: this.dir, version: r.set.version, warnings: r.warnings }, 'rule set loaded with warnings')
    return { ok: true, version: r.set.version, rules: count }
  }

  /** Reloads on any change in the directory, after debounceMs of quiet. Errors are logged, the set kept. */
  watch (): void {
    if (this.watcher !== null) return
    // Not persistent: watching alone must not keep a process alive that is otherwise done.
    const w = watch(this.dir, { persistent: false }, () => { this.schedule() })
    w.on('error', (err) => {
      this.log.error({ dir: this.dir, err }, 'rules directory watch failed; reload with SIGHUP or the admin API')
    })
    this.watcher = w
  }

  private schedule (): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      // reload() logs its own outcome; nothing else to do with the result here.
      this.reload().catch((err: unknown) => { this.log.error({ err }, 'rule reload failed') })
    }, this.debounceMs)
    // Like the watcher, a pending reload must not keep a process alive that is otherwise done.
    this.timer.unref()
  }

  close (): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    this.watcher?.close()
    this.watcher = null
  }
}
