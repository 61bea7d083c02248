// A customer's replay state: windows per card (or the customer's own) and rule, daily totals per card and
// control kind. Cards are told apart by their last four digits as text, whatever their form.
import t from 'tap'
import { CustomerState } from '../../src/backtest/windows.js'

t.test('cards are told apart by their text: leading zeros, empty, letters, long', async t => {
  const c = new CustomerState()
  const cards = ['0123', '123', '00123', '', '0', '00', 'ab12', 'AB12', '1234567890', '12345678901', '999999999', '٣٤٥٦']
  // a window and a daily total of each card, each with its own count
  cards.forEach((last4, i) => {
    for (let k = 0; k <= i; k++) c.window(last4, 'atm-daily-count').add(1000 + k, 1, 0)
    c.dayTotal(last4, 'ATM').add('20261110', i + 1)
  })
  cards.forEach((last4, i) => {
    const w = c.window(last4, 'atm-daily-count')
    w.seek(0)
    t.equal(w.count, i + 1, `${JSON.stringify(last4)}: its own window`)
    t.equal(c.dayTotal(last4, 'ATM').on('20261110'), i + 1, `${JSON.stringify(last4)}: its own daily total`)
  })
})

t.test('windows per rule and scope, daily totals per kind', async t => {
  const c = new CustomerState()
  c.window('1234', 'a').add(10, 5, 0)
  c.window('1234', 'b').add(10, 7, 0)
  c.window(null, 'a').add(10, 11, 0)
  c.window('9999', 'a').add(10, 13, 0)
  const amount = (last4: string | null, rule: string): number => { const w = c.window(last4, rule); w.seek(0); return w.amount }
  t.same([amount('1234', 'a'), amount('1234', 'b'), amount(null, 'a'), amount('9999', 'a'), amount('9999', 'b')], [5, 7, 11, 13, 0])
  c.dayTotal('1234', 'ATM').add('20261110', 100)
  c.dayTotal('1234', 'international').add('20261110', 200)
  c.dayTotal('1234', 'POS').add('20261110', 300)
  t.same(['ATM', 'international', 'POS', 'ECOM'].map(k => c.dayTotal('1234', k).on('20261110')), [100, 200, 300, 0])
  t.equal(c.dayTotal('9999', 'ATM').on('20261110'), 0, 'per card')
})
