// Builders shared by the rule tests: a rule set compiled from rules in memory, and facts from a request.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AuthRequest } from '../../src/domain/request.js'
import { buildFacts, type RiskFacts } from '../../src/rules/facts.js'
import { compileRuleFiles } from '../../src/rules/load.js'
import type { RuleError } from '../../src/rules/errors.js'
import type { CompiledRuleSet, Facts } from '../../src/rules/types.js'

export function request (over: Partial<AuthRequest> = {}): AuthRequest {
  return {
    urn: 'URN0001',
    terminalId: 'T1',
    systemTraceAuditNumber: '162',
    cardNetwork: 'RUPAY',
    channel: 'POS',
    transactionAmount: '1250',
    transactionReferenceNumber: 'REF-1',
    last4Digits: '4321',
    currencyCode: '356',
    mcc: '5411',
    ...over
  }
}

/** Compiles rules given inline (as one file, 10-test.json); fails the test with the errors if refused. */
export function compile (rules: unknown[], timezone = 'UTC'): CompiledRuleSet {
  const r = compileRuleFiles([{ name: '10-test.json', text: JSON.stringify({ rules }) }], { timezone })
  if (!r.ok) throw new Error('rule set refused: ' + JSON.stringify(r.errors))
  return r.set
}

/** The errors of rules that must be refused (empty when they load). */
export function refusal (rules: unknown[]): RuleError[] {
  const r = compileRuleFiles([{ name: '10-test.json', text: JSON.stringify({ rules }) }], { timezone: 'UTC' })
  return r.ok ? [] : r.errors
}

export function facts (over: Partial<AuthRequest> = {}, nowMs = Date.UTC(2026, 10, 21, 9, 30), risk?: RiskFacts | null): Facts {
  return buildFacts(request(over), { nowMs, timezone: 'UTC', risk })
}

/** Whether a one-rule set with this `when` declines these facts. */
export function matches (when: unknown, f: Facts): boolean {
  const set = compile([{ id: 'r', when, then: { decline: '05' } }])
  return set.evaluate(f, 0).decline !== null
}

/** A fresh directory, removed when the test ends. */
export async function tempDir (t: { teardown: (fn: () => unknown) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'extauth-rules-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}
