// The queues page's section of reconciliation exceptions (docs/operations/settlement.md, Working the queue):
// the open ones, newest first, each with what `accept` would do. Resolving is an audited API call.
import type { QueueSection } from '../deps.js'
import { customerHref, isoOf } from '../html.js'
import { minor } from '../words.js'
import type { SettlementStore } from '../../settlement/types.js'

/** open exceptions shown at most */
const SHOWN_MAX = 100

export function reconciliationSection (settlement: SettlementStore): QueueSection {
  return {
    id: 'reconciliation',
    title: 'Reconciliation exceptions',
    render: async () => {
      const { items } = await settlement.listExceptions({ status: 'open', limit: SHOWN_MAX })
      if (items.length === 0) return <p>No open exception: every imported posting matched.</p>
      return (
        <table>
          <caption class='muted'>Open, newest first (at most {SHOWN_MAX}). Resolve one with POST /admin/v1/reconciliation/exceptions/:id/resolve and a reason (accept, release, credit, debit or writeOff).</caption>
          <thead><tr><th scope='col'>Exception</th><th scope='col'>Kind</th><th scope='col'>Customer</th><th scope='col'>Reference</th><th scope='col' class='num'>Amount</th><th scope='col'>Accept would</th><th scope='col'>Statement</th><th scope='col'>Opened (UTC)</th></tr></thead>
          <tbody>
            {items.map((x) => (
              <tr key={x.id}>
                <td><code>{x.id}</code></td>
                <td>{x.kind}</td>
                <td><a href={customerHref(x.urn)}>{x.urn}</a></td>
                <td>{x.reference}</td>
                <td class='num'>{minor(x.amount)}</td>
                <td>{x.accept.action === 'none' ? 'move nothing' : `${x.accept.action} ${minor(x.accept.amount)}`}</td>
                <td>{x.statementId}</td>
                <td>{isoOf(x.createdAtMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )
    }
  }
}
