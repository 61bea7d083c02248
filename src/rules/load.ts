// Reads a rules directory and turns it into a compiled rule set, or into the full list of its errors.
// The caller (RulesManager) keeps its running set when the answer is a refusal.
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { CompiledRuleSet } from './types.js'
import { compileRuleSet } from './compile.js'
import { ruleError, type RuleError } from './errors.js'
import { validateRuleSet, type CheckedRule, type RuleFile } from './validate.js'
import { ruleSetVersion } from './version.js'

/** Largest rule file read; a bigger one is refused rather than parsed. */
export const ruleFileBytesMax = 1024 * 1024

/** warnings: reported with the set, which still loads (a rule that can never be reached) */
/** Files ending so are JSON Schemas for editors (rules.schema.json), never rule files. */
export const RULE_SCHEMA_SUFFIX = '.schema.json'

export type LoadResult =
  | { ok: true, set: CompiledRuleSet, files: string[], warnings: RuleError[] }
  | { ok: false, errors: RuleError[], warnings?: RuleError[] }

export interface LoadOptions {
  timezone: string
}

/** Validates and compiles files already in memory (name order is the caller's). Pure: no I/O. */
export function compileRuleFiles (files: readonly RuleFile[], opts: LoadOptions): LoadResult {
  const checked = validateRuleSet(files)
  if (!checked.ok) return checked
  const set = compileRuleSet(checked.rules, { version: ruleSetVersion(files), timezone: opts.timezone })
  return { ok: true, set, files: files.map(f => f.name), warnings: checked.warnings }
}

/**
 * A directory's rules validated but not compiled, with the set's version: plain data, for a thread that
 * compiles them itself (compileRuleSet) without loading the validator (a backtest's worker threads).
 */
export async function loadCheckedRules (dir: string): Promise<{ ok: true, rules: CheckedRule[], version: string } | { ok: false, errors: RuleError[] }> {
  const { files, errors } = await readRuleFiles(dir)
  if (errors.length > 0) return { ok: false, errors }
  const checked = validateRuleSet(files)
  return checked.ok ? { ok: true, rules: checked.rules, version: ruleSetVersion(files) } : { ok: false, errors: checked.errors }
}

/**
 * The rule files of a directory: regular files (or links to them, as a Kubernetes ConfigMap mounts them)
 * named *.json and not starting with a dot (editor lock files, ConfigMap internals), sorted by name in
 * code-unit order so the order does not depend on the locale. `*.schema.json` is the rule files' JSON
 * Schema, kept beside them for editors, not a rule file.
 */
async function readRuleFiles (dir: string): Promise<{ files: RuleFile[], errors: RuleError[] }> {
  const errors: RuleError[] = []
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (err) {
    return { files: [], errors: [ruleError('RULE_DIR_UNREADABLE', dir, null, (err as NodeJS.ErrnoException).code ?? (err as Error).message)] }
  }
  names = names.filter(n => n.endsWith('.json') && !n.endsWith(RULE_SCHEMA_SUFFIX) && !n.startsWith('.')).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const files: RuleFile[] = []
  for (const name of names) {
    const path = join(dir, name)
    try {
      const st = await stat(path)
      if (!st.isFile()) continue
      if (st.size > ruleFileBytesMax) {
        errors.push(ruleError('RULE_FILE_TOO_LARGE', name, null, `${st.size} bytes; the limit is ${ruleFileBytesMax}`))
        continue
      }
      let text = await readFile(path, 'utf8')
      // Some editors save a byte-order mark, which JSON.parse rejects.
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      files.push({ name, text })
    } catch (err) {
      // A file removed between readdir and read is an edit in progress: the watcher reloads again.
      errors.push(ruleError('RULE_FILE_UNREADABLE', name, null, (err as NodeJS.ErrnoException).code ?? (err as Error).message))
    }
  }
  return { files, errors }
}

export async function loadRuleSet (dir: string, opts: LoadOptions): Promise<LoadResult> {
  const { files, errors } = await readRuleFiles(dir)
  const result = compileRuleFiles(files, opts)
  if (errors.length === 0) return result
  return { ok: false, errors: result.ok ? errors : [...errors, ...result.errors], warnings: result.warnings }
}
