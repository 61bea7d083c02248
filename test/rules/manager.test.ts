// RulesManager: the running set is replaced only by a set that loads whole; the watcher reloads on change.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pino from 'pino'
import t from 'tap'
import { RulesInvalidError } from '../../src/rules/errors.js'
import { RulesManager } from '../../src/rules/manager.js'
import { facts, tempDir } from './helpers.js'

interface LogLine { level: number, msg: string, version?: string, rules?: number, errors?: Array<{ code: string }> }

function capture (): { log: pino.Logger, lines: LogLine[] } {
  const lines: LogLine[] = []
  const log = pino({ level: 'info' }, { write: (s: string) => { lines.push(JSON.parse(s) as LogLine) } })
  return { log, lines }
}

const gambling = (codes: string[]): string => JSON.stringify({
  rules: [{ id: 'block-gambling', description: 'no gambling', when: { mcc: { in: codes } }, then: { decline: '05' } }]
})

/** Polls until `cond` holds; fails after `ms` (a bound on waiting, not a timing assertion). */
async function until (cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) return false
    await sleep(10)
  }
  return true
}

t.test('start loads the set; current and loadedAt describe it', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995']))
  const { log, lines } = capture()
  const m = new RulesManager({ dir, timezone: 'UTC', log, clock: () => 1234 })
  t.throws(() => m.current, { code: 'ERR_ASSERTION' }, 'no set before start')
  t.equal(m.loadedAt, null)
  await m.start()
  t.equal(m.current.rules.length, 1)
  t.equal(m.loadedAt, 1234)
  t.equal(m.current.evaluate(facts({ mcc: '7995' }), 0).decline?.ruleId, 'block-gambling')
  const line = lines.find(l => l.msg === 'rule set loaded')
  t.equal(line?.version, m.current.version, 'a log line names the version')
  t.equal(line?.rules, 1)
})

t.test('start throws with the errors when the initial set is invalid', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-merchant.json'), '{ "rules": [ { "id": "x", "then": { "decline": "99" } } ] }')
  const m = new RulesManager({ dir, timezone: 'UTC', log: capture().log })
  const err = await m.start().then(() => null, (e: unknown) => e)
  t.ok(err instanceof RulesInvalidError)
  t.equal((err as RulesInvalidError).code, 'EXTAUTH_ERR_RULES_INVALID')
  t.same((err as RulesInvalidError).errors.map(e => e.code), ['RULE_DECLINE_CODE_INVALID'])
})

t.test('reload with a broken file keeps the old set and returns the errors', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995']))
  const { log, lines } = capture()
  const m = new RulesManager({ dir, timezone: 'UTC', log })
  await m.start()
  const before = m.current
  await writeFile(join(dir, '20-atm.json'), '{ "rules": [ { "id": "atm", "when": { "chanel": { "eq": "ATM" } }, "then": { "decline": "05" } } ] }')
  const r = await m.reload()
  t.equal(r.ok, false)
  t.same(r.ok ? [] : r.errors.map(e => [e.file, e.ruleId, e.code, e.path]), [['20-atm.json', 'atm', 'RULE_FIELD_UNKNOWN', '/rules/0/when/chanel']])
  t.equal(m.current, before, 'the running set is kept')
  const refused = lines.find(l => l.msg.startsWith('rule set refused'))
  t.same(refused?.errors?.map(e => e.code), ['RULE_FIELD_UNKNOWN'], 'the refusal is logged with its errors')

  await writeFile(join(dir, '20-atm.json'), '{ "rules": [ { "id": "atm", "when": { "channel": { "eq": "ATM" } }, "then": { "decline": "05" } } ] }')
  const fixed = await m.reload()
  t.same(fixed, { ok: true, version: m.current.version, rules: 2 })
  t.not(m.current.version, before.version, 'a new set, a new version')
})

t.test('reloads triggered together run one at a time and end on the files as they are', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995']))
  const m = new RulesManager({ dir, timezone: 'UTC', log: capture().log })
  await m.start()
  const first = m.reload()
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995', '7800']))
  const second = m.reload()
  const [a, b] = await Promise.all([first, second])
  t.same(a, b, 'the second trigger joined the running reload')
  t.equal(m.current.evaluate(facts({ mcc: '7800' }), 0).decline?.ruleId, 'block-gambling', 'the last edit is loaded')
})

t.test('watch: a change is picked up after the debounce; a broken edit is refused and logged', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995']))
  const { log, lines } = capture()
  const m = new RulesManager({ dir, timezone: 'UTC', log, debounceMs: 50 })
  t.teardown(() => m.close())
  await m.start()
  m.watch()
  const v1 = m.current.version
  const loads = (): number => lines.filter(l => l.msg === 'rule set loaded').length
  const loadsBefore = loads()

  // An editor saving in several steps: one reload for the burst, ending on the final content.
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995', '7800']))
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995', '7800', '7801']))
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995', '7800', '7801', '7802']))
  t.ok(await until(() => m.current.version !== v1), 'the change was loaded')
  t.ok(await until(() => m.current.evaluate(facts({ mcc: '7802' }), 0).decline !== null), 'the last edit is the one running')
  t.ok(loads() - loadsBefore < 3, 'the burst of writes was debounced')

  const v2 = m.current.version
  await writeFile(join(dir, '20-broken.json'), '{ "rules": [')
  t.ok(await until(() => lines.some(l => l.msg.startsWith('rule set refused'))), 'the refusal was logged')
  t.equal(m.current.version, v2, 'the running set is kept')
  const refused = lines.find(l => l.msg.startsWith('rule set refused'))
  t.same(refused?.errors?.map(e => e.code), ['RULE_JSON_INVALID'])
})

t.test('close stops watching', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, '10-merchant.json'), gambling(['7995']))
  const { log, lines } = capture()
  const m = new RulesManager({ dir, timezone: 'UTC', log, debounceMs: 0 })
  await m.start()
  m.watch()
  m.close()
  // a second manager watching the same directory: once it has seen the edit, an open watcher would have too
  const control = capture()
  const other = new RulesManager({ dir, timezone: 'UTC', log: control.log, debounceMs: 0 })
  await other.start()
  other.watch()
  t.teardown(() => { other.close() })
  await writeFile(join(dir, '10-merchant.json'), gambling(['7800']))
  t.ok(await until(() => control.lines.filter(l => l.msg === 'rule set loaded').length >= 2), 'a watcher left open sees the edit')
  t.equal(other.current.evaluate(facts({ mcc: '7800' }), 0).decline?.ruleId, 'block-gambling', 'and picks it up')
  t.equal(lines.filter(l => l.msg === 'rule set loaded').length, 1, 'only the load of start()')
  t.equal(m.current.evaluate(facts({ mcc: '7800' }), 0).decline, null, 'the edit was not picked up')
})
