// What `npm run demo` prints for a payment: the answer and why, from the decision stored for it. A payment
// the instance shed for overload has no decision, and its line says so; a lookup that did not answer a
// decision is never printed as a reason: it stops the demo, naming what the lookup answered.
export interface Answer { responseCode: string, responseDescription: string }
export interface Lookup { status: number, body: Record<string, unknown> }

export const SHED_REASON = 'shed: the instance was overloaded, no decision made'

function lookupFailed (lookup: Lookup): string {
  return `${lookup.status} ${String(lookup.body.error)}: ${String(lookup.body.message)}`
}

/** why the answer was given: the deciding rule, or the reason word and the deciding control */
export function reasonOf (answer: Answer, lookup: Lookup, shed: boolean): string {
  if (shed) {
    if (lookup.status === 200) throw new Error(`answer ${answer.responseCode} counted as shed, yet a decision was stored for it`)
    return SHED_REASON
  }
  if (lookup.status !== 200) throw new Error(`answer ${answer.responseCode}, and the lookup of its decision answered ${lookupFailed(lookup)}`)
  const d = lookup.body
  if (typeof d.ruleId === 'string') return `rule ${d.ruleId}`
  if (typeof d.reason !== 'string') throw new Error(`answer ${answer.responseCode}: the decision found has no reason: ${JSON.stringify(d)}`)
  // the decision's one public shape (src/store/decision-entry.ts): the control's kind and the check it failed
  const control = d.control as { kind?: unknown, check?: unknown } | null | undefined
  return control != null ? `${d.reason}: ${String(control.kind)} ${String(control.check)}` : d.reason
}

export function paymentLine (what: string, amount: string, answer: Answer, lookup: Lookup, shed: boolean): string {
  return `   ${what.padEnd(34)} ${amount.padStart(10)} → ${answer.responseCode} ${answer.responseDescription} (${reasonOf(answer, lookup, shed)})`
}
