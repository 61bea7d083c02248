// ISO 4217 as the people who write rules and read reports know it: letters (USD) beside the numeric codes the
// platform sends (840), and each currency's minor unit (2 for 356, 0 for 392). From the currency-codes
// package, which carries the standard's published list, rather than a table kept here. Imports nothing of ours.
import cc from 'currency-codes'

/** The numeric code of an alphabetic one ("USD" → "840"), or null when it is none. */
export function numericOf (alpha: string): string | null {
  return /^[A-Za-z]{3}$/.test(alpha) ? cc.code(alpha.toUpperCase())?.number ?? null : null
}

/** The alphabetic code of a numeric one ("356" → "INR"), or null when it is none. */
export function alphaOf (numeric: string): string | null {
  return /^[0-9]{3}$/.test(numeric) ? cc.number(numeric)?.code ?? null : null
}

/** Digits after the decimal point of the numeric code's currency; null when unknown. */
export function minorDigitsOf (numeric: string): number | null {
  return /^[0-9]{3}$/.test(numeric) ? cc.number(numeric)?.digits ?? null : null
}
