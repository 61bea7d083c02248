// Amounts as a person reads them in a report: minor units shown in the currency's own decimals with its
// letters ("31,204.00 INR" for 3120400 of 356; "1,250 JPY" for 1250 of 392), never minor units grouped like
// currency ("3,120,400"). Exact for every safe integer: integer division, no floating point.
import { alphaOf, minorDigitsOf } from '../domain/currencies.js'

/** `minor` minor units of the ISO 4217 numeric `currency` (2 decimals when the currency is not known). */
export function moneyWords (minor: number, currency: string): string {
  const digits = minorDigitsOf(currency) ?? 2
  const scale = 10 ** digits
  const sign = minor < 0 ? '-' : ''
  const abs = Math.abs(minor)
  const whole = Math.trunc(abs / scale).toLocaleString('en-US')
  const fraction = digits === 0 ? '' : `.${String(abs % scale).padStart(digits, '0')}`
  return `${sign}${whole}${fraction} ${alphaOf(currency) ?? currency}`
}
