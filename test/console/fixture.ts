// One console fixture: an app with a rule set, keys of several scopes, a customer with a card and money, and
// decisions made through the live endpoint (one with hostile text in every free field).
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build, type Built, type BuildOptions } from '../helpers/app.js'
import { keysFile, type KeySpec } from '../helpers/admin-keys.js'
import { authBody, platformHeaders } from '../helpers/config.js'
import { policyFile } from '../standin/helpers.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export const XSS = '<script>alert(1)</script>'
export const URN = 'URNCONSOLE1'
export const LAST4 = '4321'

export const KEYS = {
  reader: { id: 'support-reader', key: 'reader-key-0123456789abcdef', scopes: ['read'] },
  agent: { id: 'support-agent', key: 'agent-key-0123456789abcdef', scopes: ['read', 'money:write', 'customers:write', 'controls:write', 'events', 'rules:reload'] }
} satisfies Record<string, KeySpec>

/** an on-call operator's key: it may force stand-in (standInConsoleFixture) */
export const STANDIN_OPERATOR = { id: 'on-call', key: 'on-call-key-0123456789abcdef', scopes: ['read', 'standin'] } satisfies KeySpec

export const RULES = {
  rules: [
    { id: 'block-gambling', description: `No gambling ${XSS}`, when: { mcc: { in: ['7995'] } }, then: { decline: '05' } },
    { id: 'atm-watch', mode: 'shadow', description: 'ATM over 1000.00 (watching)', when: { channel: { eq: 'ATM' }, amount: { gt: 100000 } }, then: { decline: '05' } }
  ]
}

export interface Fixture extends Built {
  /** references of the decisions made: approved, declined by the rule, declined for funds */
  refs: { approved: string, hostile: string, rule: string, funds: string }
}

export async function decide (built: Built, over: Record<string, unknown>): Promise<{ ref: string, code: string }> {
  const body = authBody({ urn: URN, last4Digits: LAST4, ...over })
  const res = await built.publicApp.inject({ method: 'POST', url: '/api/v1/externalAuth', headers: platformHeaders(), payload: body })
  return { ref: String(body.transactionReferenceNumber), code: String((res.json<{ responseCode: string }>()).responseCode) }
}

/** `extraKeys`: admin keys beside KEYS */
export async function consoleFixture (t: Teardown, opts: BuildOptions = {}, extraKeys: KeySpec[] = []): Promise<Fixture> {
  const rulesDir = mkdtempSync(join(tmpdir(), 'extauth-console-rules-'))
  t.teardown(() => { rmSync(rulesDir, { recursive: true, force: true }) })
  writeFileSync(join(rulesDir, '10-console.json'), JSON.stringify(RULES, null, 2))
  const keys = keysFile(t, [...Object.values(KEYS), ...extraKeys])
  const built = await build(t, { ...opts, env: { RULES_DIR: rulesDir, ADMIN_KEYS_FILE: keys.path, ...opts.env } })
  const store = built.deps.store
  await store.putCustomer(URN, { customerId: 'CUST-C1' })
  await store.putCard(URN, LAST4, 'ACTIVE')
  await store.credit(URN, 50_000, 'seed-1')
  const approved = await decide(built, { transactionAmount: '1250' })
  const hostile = await decide(built, { transactionAmount: '700', merchantName: XSS, merchantId: XSS, terminalId: '"><img src=x onerror=alert(2)>' })
  const rule = await decide(built, { mcc: '7995', transactionAmount: '300' })
  const funds = await decide(built, { transactionAmount: '999999' })
  // the shadow rule would have declined it (a hit on the rules page); funds decline it
  await decide(built, { channel: 'ATM', transactionAmount: '150000' })
  if (approved.code !== '00' || hostile.code !== '00' || rule.code !== '05' || funds.code !== '51') throw new Error(`fixture decisions: ${JSON.stringify({ approved, hostile, rule, funds })}`)
  return { ...built, refs: { approved: approved.ref, hostile: hostile.ref, rule: rule.ref, funds: funds.ref } }
}

/** The console with stand-in configured (test/standin's policy) and STANDIN_OPERATOR's key beside KEYS. */
export async function standInConsoleFixture (t: Teardown): Promise<Fixture> {
  return await consoleFixture(t, { env: { STANDIN_POLICY_FILE: policyFile(t) } }, [STANDIN_OPERATOR])
}
