// Checks on what a caller asks us to send, run before anything leaves the process. Problems name the
// field and the rule, never the value (it may be a card number or a secret).
import { badRequest } from './errors.js'

export class RequestChecks {
  readonly problems: string[] = []

  text (name: string, value: unknown, pattern?: RegExp, rule?: string): this {
    if (typeof value !== 'string' || value === '') this.problems.push(`${name} is required`)
    else if (pattern !== undefined && !pattern.test(value)) this.problems.push(`${name} ${rule ?? 'is malformed'}`)
    return this
  }

  optionalText (name: string, value: unknown, pattern?: RegExp, rule?: string): this {
    if (value === undefined) return this
    return this.text(name, value, pattern, rule)
  }

  /** An amount in minor units: a safe integer, never a float or a numeric string. */
  amount (name: string, value: unknown, positive = true): this {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < (positive ? 1 : 0)) {
      this.problems.push(`${name} must be an integer number of minor units${positive ? ' above 0' : ''}`)
    }
    return this
  }

  optionalAmount (name: string, value: unknown, positive = true): this {
    return value === undefined ? this : this.amount(name, value, positive)
  }

  /** Throws the typed bad-request error when any check failed. */
  done (): void {
    if (this.problems.length > 0) throw badRequest(this.problems)
  }
}
