// The card controls part of the store contract (docs/api/card-controls.md): run on every store by storeContract.
import { randomUUID } from 'node:crypto'
import type { Test } from 'tap'
import { abandonInputOf, type AuthorizeInput, type Store } from '../../src/store/types.js'
import type { ControlDefault, ControlKind, ControlsInput } from '../../src/domain/controls.js'
import { rejectionCode } from './contract.js'

type MakeStore = (t: Test) => Promise<Store>
type AuthInput = (urn: string, over?: Partial<AuthorizeInput>) => AuthorizeInput

const DAY = '20261123'

/** the controls of one transaction: each kind with its program default (enabled, no limit unless given) */
export function controls (kinds: Array<ControlKind | [ControlKind, Partial<ControlDefault>]>, day = DAY): ControlsInput {
  return {
    day,
    defaults: kinds.map((k) => {
      const [kind, over] = typeof k === 'string' ? [k, {}] : k
      return { kind, enabled: true, perTransactionMax: null, dailyMax: null, ...over }
    })
  }
}

export function controlsContract (t: Test, make: MakeStore, authInput: AuthInput, urnFor: (tag: string) => string): void {
  async function cardholder (store: Store, amount = 1_000_000): Promise<string> {
    const urn = urnFor('cc')
    await store.putCustomer(urn, {})
    await store.credit(urn, amount, `seed-${urn}`)
    await store.putCard(urn, '4321', 'ACTIVE')
    return urn
  }
  const balance = async (store: Store, urn: string): Promise<number | undefined> => (await store.getCustomer(urn))?.available

  t.test('controls: an off control declines 05 control_off, naming it; the card own setting wins over the default', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 1000)
    const off = controls([['ECOM', { enabled: false }]])
    const a = authInput(urn, { controls: off })
    t.match(await store.authorize(a), { code: '05', reason: 'control_off', ruleId: null, control: { control: 'ECOM', check: 'enabled', debit: 100 } })
    t.equal(await balance(store, urn), 1000, 'nothing held')
    t.match(await store.getDecision(urn, a.reference), { code: '05', reason: 'control_off', held: '0', control: { control: 'ECOM', check: 'enabled', debit: 100 }, controlEntries: [] })
    t.match(await store.authorize({ ...a, attempt: randomUUID() }), { code: '05', reason: 'control_off', replayed: true })

    await store.patchCardControls(urn, '4321', { ECOM: { enabled: true } })
    t.match(await store.authorize(authInput(urn, { controls: off })), { code: '00' }, 'turned on by the card over a default off')
    await store.patchCardControls(urn, '4321', { POS: { enabled: false } })
    t.match(await store.authorize(authInput(urn, { controls: controls(['POS']) })), { code: '05', reason: 'control_off', control: { control: 'POS' } }, 'turned off by the card over a default on')
    t.match(await store.authorize(authInput(urn, { last4: '4321', controls: controls(['ATM']) })), { code: '00' }, 'another kind is not touched')
    t.equal(await balance(store, urn), 800)
  })

  t.test('controls: perTransactionMax, equal passes, more is 61 control_limit with the limit', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 10_000)
    const c = controls([['POS', { perTransactionMax: 500 }]])
    t.match(await store.authorize(authInput(urn, { debitAmount: 500, controls: c })), { code: '00' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 501, controls: c })), { code: '61', reason: 'control_limit', control: { control: 'POS', check: 'perTransactionMax', limit: 500, debit: 501 } })
    await store.patchCardControls(urn, '4321', { POS: { perTransactionMax: 600 } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 600, controls: c })), { code: '00' }, 'the card own limit over the default')
    await store.patchCardControls(urn, '4321', { POS: { perTransactionMax: null } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 5000, controls: c })), { code: '00' }, 'null: no limit, even where the default has one')
    t.equal(await balance(store, urn), 10_000 - 500 - 600 - 5000)
  })

  t.test('controls: dailyMax counts approvals of the card, kind and local day only', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 1_000_000)
    const atm = (day = DAY): ControlsInput => controls([['ATM', { dailyMax: 1000 }]], day)
    t.match(await store.authorize(authInput(urn, { debitAmount: 600, controls: atm() })), { code: '00' })
    const over = authInput(urn, { debitAmount: 401, controls: atm() })
    t.match(await store.authorize(over), { code: '61', reason: 'control_limit', control: { control: 'ATM', check: 'dailyMax', limit: 1000, totalBefore: 600, debit: 401 } })
    t.match(await store.getDecision(urn, over.reference), { control: { control: 'ATM', check: 'dailyMax', limit: 1000, totalBefore: 600, debit: 401 } }, 'the record keeps the values seen')
    t.match(await store.authorize(authInput(urn, { debitAmount: 400, controls: atm() })), { code: '00' }, 'equal to dailyMax passes')
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, controls: atm() })), { code: '61' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 1000, controls: atm('20261124') })), { code: '00' }, 'the next local day starts at zero')
    t.match(await store.authorize(authInput(urn, { debitAmount: 1000, controls: controls([['POS', { dailyMax: 1000 }]]) })), { code: '00' }, 'another kind has its own total')
    await store.putCard(urn, '1111', 'ACTIVE')
    t.match(await store.authorize(authInput(urn, { last4: '1111', debitAmount: 1000, controls: atm() })), { code: '00' }, 'another card has its own total')
    // a decline for funds or a rule counts nothing
    const poor = await cardholder(store, 300)
    t.match(await store.authorize(authInput(poor, { debitAmount: 900, controls: atm() })), { code: '51' })
    t.match(await store.authorize(authInput(poor, { debitAmount: 200, controls: atm(), decline: { ruleId: 'r', code: '05', mode: 'enforce', values: {} } })), { code: '05', reason: 'rule' })
    await store.credit(poor, 10_000, 'more')
    t.match(await store.authorize(authInput(poor, { debitAmount: 1000, controls: atm() })), { code: '00' }, 'nothing was counted by the declines')
    // a daily limit set during the day sees what was spent before it
    await store.patchCardControls(urn, '4321', { ATM: { dailyMax: 1200 } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 201, controls: atm() })), { code: '61', control: { limit: 1200, totalBefore: 1000 } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 200, controls: atm() })), { code: '00' })
  })

  t.test('controls: cross-border needs its channel and international; both totals count', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 1_000_000)
    const abroad = (intl: Partial<ControlDefault>): ControlsInput => controls([['POS', { dailyMax: 5000 }], ['international', intl]])
    t.match(await store.authorize(authInput(urn, { controls: abroad({ enabled: false }) })), { code: '05', reason: 'control_off', control: { control: 'international' } })
    await store.patchCardControls(urn, '4321', { POS: { enabled: false } })
    t.match(await store.authorize(authInput(urn, { controls: abroad({ enabled: true }) })), { code: '05', control: { control: 'POS' } }, 'the channel control applies abroad too')
    await store.patchCardControls(urn, '4321', { POS: { enabled: true }, international: { enabled: true, dailyMax: 700 } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 700, controls: abroad({ enabled: false }) })), { code: '00' }, 'turned on by the cardholder')
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, controls: abroad({ enabled: false }) })), { code: '61', control: { control: 'international', check: 'dailyMax', limit: 700, totalBefore: 700 } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 4300, controls: controls([['POS', { dailyMax: 5000 }]]) })), { code: '00' }, 'at home: the POS total holds the 700 spent abroad')
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, controls: controls([['POS', { dailyMax: 5000 }]]) })), { code: '61', control: { control: 'POS', totalBefore: 5000 } })
  })

  t.test('controls: after customer and card state, before the rules, limits and funds', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 50)
    const off = controls([['ECOM', { enabled: false }]])
    const decline = { ruleId: 'r', code: '05' as const, mode: 'enforce' as const, values: {} }
    t.match(await store.authorize(authInput(urn, { controls: off, decline })), { code: '05', reason: 'control_off' }, 'before a rule decline')
    t.match(await store.authorize(authInput(urn, { debitAmount: 100, controls: controls([['ECOM', { perTransactionMax: 10 }]]) })), { code: '61', reason: 'control_limit' }, 'before funds')
    t.match(await store.authorize(authInput(urn, { controls: off, limits: [{ ruleId: 'lim', mode: 'enforce', measure: 'count', per: 'urn', windowStartMs: 0, retainMs: 60_000, max: 0, code: '65', values: {} }] })), { code: '05', reason: 'control_off' }, 'before a limit rule')
    await store.putCard(urn, '4321', 'LOST')
    t.match(await store.authorize(authInput(urn, { controls: off })), { code: '41' }, 'card state first')
    t.match(await store.authorize(authInput(urnFor('none'), { controls: off })), { code: '14' })
  })

  t.test('controls: a reversal gives the amount back to the daily total; a compensation leaves no trace', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 1_000_000)
    const c = controls([['ECOM', { dailyMax: 1000 }]])
    const a = authInput(urn, { debitAmount: 600, controls: c })
    t.match(await store.authorize(a), { code: '00' })
    t.match(await store.getDecision(urn, a.reference), { controlEntries: [[String, '600']] })
    t.match(await store.authorize(authInput(urn, { debitAmount: 500, controls: c })), { code: '61', control: { totalBefore: 600 } })
    await store.reverse(urn, a.reference, 200)
    t.match(await store.authorize(authInput(urn, { debitAmount: 601, controls: c })), { code: '61', control: { totalBefore: 400 } }, 'a part reversal gives its part back')
    const b = authInput(urn, { debitAmount: 600, controls: c })
    t.match(await store.authorize(b), { code: '00' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, controls: c })), { code: '61', control: { totalBefore: 1000 } })

    // abandon after the approval: the 600 of b leaves the total
    t.equal(await store.abandon(abandonInputOf(b)), 'released')
    t.match(await store.authorize(authInput(urn, { debitAmount: 601, controls: c })), { code: '61', control: { totalBefore: 400 } })
    const fresh = await cardholder(store, 10_000)
    const x = authInput(fresh, { debitAmount: 1000, controls: c })
    t.match(await store.authorize(x), { code: '00' })
    await store.reverse(fresh, x.reference, null)
    t.match(await store.getDecision(fresh, x.reference), { controlEntries: [] })
    t.match(await store.authorize(authInput(fresh, { debitAmount: 1000, controls: c })), { code: '00' }, 'a whole reversal gives it all back')
    // a compensation before the authorize, and a commit past the deadline, count nothing
    const late = authInput(fresh, { debitAmount: 500, controls: controls([['POS', { dailyMax: 500 }]]) })
    t.equal(await store.abandon(abandonInputOf(late)), 'tombstoned')
    t.match(await store.authorize(late), { code: '05', replayed: true })
    const pastDeadline = authInput(fresh, { debitAmount: 500, deadlineAtMs: Date.now() - 1000, controls: late.controls })
    t.match(await store.authorize(pastDeadline), { code: '05', reason: 'deadline' })
    t.match(await store.getDecision(fresh, pastDeadline.reference), { controlEntries: [] })
    const offLate = await store.authorize(authInput(fresh, { deadlineAtMs: Date.now() - 1000, controls: controls([['ATM', { enabled: false }]]) }))
    t.match(offLate, { code: '05', reason: 'deadline' })
    t.equal(offLate.control, undefined, 'an answer on the deadline names no control')
    t.match(await store.authorize(authInput(fresh, { debitAmount: 500, controls: late.controls })), { code: '00' }, 'the POS total was untouched')
  })

  t.test('controls: the largest amounts are checked and counted exactly', async (t) => {
    const store = await make(t)
    const max = 999_999_999_999_999
    const urn = await cardholder(store, max)
    const c = controls([['POS', { dailyMax: max, perTransactionMax: max }]])
    t.match(await store.authorize(authInput(urn, { debitAmount: max - 1, controls: c })), { code: '00' })
    t.match(await store.authorize(authInput(urn, { debitAmount: 2, controls: c })), { code: '61', control: { check: 'dailyMax', limit: max, totalBefore: max - 1, debit: 2 } })
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, controls: c })), { code: '00' }, 'up to dailyMax exactly')
    t.equal(await balance(store, urn), 0)
  })

  t.test('controls: a card own settings, read and patched field by field', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store)
    t.same(await store.getCardControls(urn, '4321'), {})
    t.same(await store.patchCardControls(urn, '4321', { ECOM: { enabled: true, dailyMax: 5000 } }), { before: {}, after: { ECOM: { enabled: true, dailyMax: 5000 } } })
    t.same(await store.patchCardControls(urn, '4321', { ECOM: { dailyMax: null }, ATM: { perTransactionMax: 0 } }), {
      before: { ECOM: { enabled: true, dailyMax: 5000 } },
      after: { ECOM: { enabled: true, dailyMax: null }, ATM: { perTransactionMax: 0 } }
    }, 'only the named fields change; null is kept as "no limit"')
    t.same(await store.patchCardControls(urn, '4321', {}), { before: { ECOM: { enabled: true, dailyMax: null }, ATM: { perTransactionMax: 0 } }, after: { ECOM: { enabled: true, dailyMax: null }, ATM: { perTransactionMax: 0 } } })
    t.equal(await rejectionCode(store.getCardControls(urn, '9999')), 'CARD_NOT_FOUND')
    t.equal(await rejectionCode(store.patchCardControls(urn, '9999', { ECOM: { enabled: true } })), 'CARD_NOT_FOUND')
    t.equal(await rejectionCode(store.patchCardControls(urnFor('none'), '4321', { ECOM: { enabled: true } })), 'CUSTOMER_NOT_FOUND')
    await store.putCard(urn, '1111', 'ACTIVE')
    t.same(await store.getCardControls(urn, '1111'), {}, 'each card has its own')
  })

  t.test('controls: 1,000 concurrent authorizations on a dailyMax allowing exactly N approve exactly N', async (t) => {
    const store = await make(t)
    const urn = await cardholder(store, 10_000_000)
    const N = 37
    const debit = 100
    const dailyMax = N * debit + debit - 1
    const c = controls([['ECOM', { dailyMax }]])
    const results = await Promise.all(Array.from({ length: 1000 }, async () => await store.authorize(authInput(urn, { debitAmount: debit, controls: c }))))
    const approved = results.filter((r) => r.code === '00')
    t.equal(approved.length, N, 'exactly N approved')
    t.equal(results.filter((r) => r.code === '61' && r.reason === 'control_limit').length, 1000 - N, 'every other one declined by the control')
    t.ok(approved.length * debit <= dailyMax, 'their sum is within dailyMax')
    t.equal(await balance(store, urn), 10_000_000 - N * debit)
  })
}
