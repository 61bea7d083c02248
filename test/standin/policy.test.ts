// The stand-in policy file: the contract's example is read as written, and every mistake stops the start
// with the file and the entry named (config.ts turns it into one STANDIN_POLICY_FILE line).
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { instanceExposure, loadPolicy, parsePolicy, refusalOf, StandInPolicyError } from '../../src/standin/policy.js'
import { POLICY, policyFile, tempDir } from './helpers.js'
import { testConfig } from '../helpers/config.js'
import { ConfigError } from '../../src/config.js'

t.test('the contract\'s example', async (t) => {
  const p = loadPolicy(policyFile(t))
  t.same(p.channels.POS, { enabled: true, perTransactionMax: 200000 })
  t.same(p.channels.ECOM, { enabled: false, perTransactionMax: null })
  t.same(p.perCard, { count: 5, amount: 1000000 })
  t.same(p.perInstance, { count: null, amount: 100000000 })
  t.ok(p.blockedMcc.has('7995'))
  t.equal(refusalOf(p, 'POS', '5411', 200000), null, 'equal to perTransactionMax passes')
  t.equal(refusalOf(p, 'POS', '5411', 200001), 'perTransactionMax')
  t.equal(refusalOf(p, 'ATM', '5411', 1), 'channel', 'a disabled channel')
  t.equal(refusalOf(p, 'POS', '6051', 1), 'mcc')
  const noAtm = parsePolicy({ ...POLICY, channels: { POS: { enabled: true } } })
  t.equal(refusalOf(noAtm, 'ATM', '5411', 1), 'channel', 'a channel left out is not approved')
  t.equal(refusalOf(noAtm, 'POS', '5411', 10 ** 12), null, 'a channel without perTransactionMax: only the caps')
})

t.test('every mistake is refused, naming the entry', async (t) => {
  const bad: Array<[string, unknown, RegExp]> = [
    ['unknown top field', { ...POLICY, perDay: {} }, /unknown field "perDay"/],
    ['unknown channel', { ...POLICY, channels: { ...POLICY.channels, MOTO: { enabled: true } } }, /channels: unknown field "MOTO"/],
    ['amount as a number', { ...POLICY, perCard: { count: 5, amount: 1000000 } }, /perCard\.amount: /],
    ['amount with decimals', { ...POLICY, perInstance: { amount: '10.50' } }, /perInstance\.amount: must be an amount/],
    ['count missing', { ...POLICY, perCard: { amount: '1' } }, /perCard: must have required property 'count'/],
    ['negative count', { ...POLICY, perCard: { count: -1, amount: '1' } }, /perCard\.count/],
    ['count as a string', { ...POLICY, perCard: { count: '5', amount: '1' } }, /perCard\.count: must be integer/],
    ['no perInstance', { channels: POLICY.channels, perCard: POLICY.perCard }, /must have required property 'perInstance'/],
    ['enabled missing', { ...POLICY, channels: { POS: { perTransactionMax: '1' } } }, /channels\.POS: must have required property 'enabled'/],
    ['bad MCC', { ...POLICY, blockedMcc: ['79'] }, /blockedMcc\.0: must be a four-digit MCC/],
    ['not an object', [], /must be object/]
  ]
  for (const [what, doc, message] of bad) {
    t.throws(() => parsePolicy(doc, 'p.json'), { name: 'StandInPolicyError', message }, what)
  }
  const dir = tempDir(t)
  writeFileSync(join(dir, 'x.json'), '{"channels":')
  t.throws(() => loadPolicy(join(dir, 'x.json')), StandInPolicyError, 'not JSON')
  t.throws(() => loadPolicy(join(dir, 'missing.json')), { message: /cannot be read \(ENOENT\)/ })
})

t.test('configuration: a bad file stops the start with one line naming STANDIN_POLICY_FILE', async (t) => {
  const dir = tempDir(t)
  writeFileSync(join(dir, 'p.json'), JSON.stringify({ ...POLICY, perCard: {} }))
  let caught: unknown = null
  try { testConfig({ STANDIN_POLICY_FILE: join(dir, 'p.json') }) } catch (err) { caught = err }
  t.ok(caught instanceof ConfigError, 'refused')
  t.match((caught as ConfigError).problems, [{ variable: 'STANDIN_POLICY_FILE', message: /p\.json: perCard: must have required property 'count'/ }])
  const ok = testConfig({ STANDIN_POLICY_FILE: policyFile(t) })
  t.equal(ok.standIn?.journalDir, './var/standin', 'the journal folder\'s default')
  t.equal(testConfig({}).standIn, undefined, 'without the file: no stand-in')
})

t.test('the worst-case exposure of one instance', async (t) => {
  const p = loadPolicy(policyFile(t))
  t.equal(instanceExposure(p, 1), 1000000, 'one card: min(perCard.amount, perCard.count × the largest perTransactionMax)')
  t.equal(instanceExposure(p, 1_000_000), 100000000, 'many cards: the instance cap')
  const tight = parsePolicy({ ...POLICY, perCard: { count: 2, amount: '5000000' }, perInstance: { count: 3, amount: '100000000' } })
  t.equal(instanceExposure(tight, 1), 2 * 500000, 'perCard.count × the largest perTransactionMax (POS-Contactless)')
  t.equal(instanceExposure(tight, 100), 3 * 500000, 'perInstance.count × the largest perTransactionMax')
})
