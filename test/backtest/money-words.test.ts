// The backtest's amounts in the currency's decimals and letters, exact for any safe integer.
import t from 'tap'
import { moneyWords } from '../../src/backtest/money-words.js'

t.test('minor units in the currency\'s own decimals', async (t) => {
  t.equal(moneyWords(3_120_400, '356'), '31,204.00 INR', 'not 3,120,400')
  t.equal(moneyWords(5, '356'), '0.05 INR')
  t.equal(moneyWords(0, '840'), '0.00 USD')
  t.equal(moneyWords(1250, '392'), '1,250 JPY', 'a currency without decimals')
  t.equal(moneyWords(1_234_567, '048'), '1,234.567 BHD', 'three decimals')
  t.equal(moneyWords(Number.MAX_SAFE_INTEGER, '356'), '90,071,992,547,409.91 INR', 'exact at the largest safe integer')
  t.equal(moneyWords(-150, '356'), '-1.50 INR')
  t.equal(moneyWords(150, '123'), '1.50 123', 'an unknown code: two decimals and the number')
})
