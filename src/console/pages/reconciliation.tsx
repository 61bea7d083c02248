// The queues page's section of reconciliation exceptions (docs/operations/settlement.md, Working the queue):
// the open ones, newest first, each with what `accept` would do, and for a key with money:write a form that
// resolves it with an action and a reason: the admin API's resolution (resolveException), audited the same.
import type { FastifyInstance } from 'fastify'
import type { VNode } from 'preact'
import type { ConsoleOptions, QueueSection } from '../deps.js'
import { BASE, Csrf, ReasonField, customerHref, isoOf, type Viewer } from '../html.js'
import { minor } from '../words.js'
import { amountField, oneOf, reasonOf } from '../forms.js'
import { actionFailure } from '../actions.js'
import { auditContext } from '../../http/admin-auth.js'
import { resolveException } from '../../settlement/resolve.js'
import { RESOLVE_ACTIONS, type ReconException, type SettlementStore } from '../../settlement/types.js'

/** open exceptions shown at most */
const SHOWN_MAX = 100

/** what each action does, in the form's choice */
const ACTION_WORDS: Record<typeof RESOLVE_ACTIONS[number], string> = {
  accept: 'accept (what "Accept would" says)',
  release: 'release the hold (the amount, or all of it)',
  credit: 'credit the amount',
  debit: 'debit the amount',
  writeOff: 'write off (close, move nothing)'
}

function ResolveForm ({ x, viewer }: { x: ReconException, viewer: Viewer }): VNode {
  const id = `rx-${x.id}`
  return (
    <form class='action' method='post' action={`${BASE}/queues/reconciliation/${encodeURIComponent(x.id)}/resolve`} aria-label={`Resolve ${x.id}`}>
      <Csrf viewer={viewer} />
      <label for={`${id}-action`}>Action
        <select id={`${id}-action`} name='action' required>
          {RESOLVE_ACTIONS.map((a) => <option key={a} value={a}>{ACTION_WORDS[a]}</option>)}
        </select>
      </label>
      <label for={`${id}-amount`}>Amount (minor units; credit, debit, part of a release)
        <input id={`${id}-amount`} name='amount' inputMode='numeric' pattern='[0-9]*' maxLength={15} autocomplete='off' />
      </label>
      <ReasonField id={`${id}-reason`} />
      <button type='submit'>Resolve</button>
    </form>
  )
}

export function reconciliationSection (settlement: SettlementStore): QueueSection {
  return {
    id: 'reconciliation',
    title: 'Reconciliation exceptions',
    render: async (viewer: Viewer) => {
      const { items } = await settlement.listExceptions({ status: 'open', limit: SHOWN_MAX })
      if (items.length === 0) return <p>No open exception: every imported posting matched.</p>
      const canResolve = viewer.scopes.has('money:write')
      return (
        <table>
          <caption class='muted'>Open, newest first (at most {SHOWN_MAX}). {canResolve ? 'Resolve one with an action and a reason (kept in the audit trail); a resolved exception leaves this list.' : 'Resolving needs a key with the scope money:write.'}</caption>
          <thead><tr><th scope='col'>Exception</th><th scope='col'>Kind</th><th scope='col'>Customer</th><th scope='col'>Reference</th><th scope='col' class='num'>Amount</th><th scope='col'>Accept would</th><th scope='col'>Statement</th><th scope='col'>Opened (UTC)</th>{canResolve && <th scope='col'>Resolve</th>}</tr></thead>
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
                {canResolve && <td><ResolveForm x={x} viewer={viewer} /></td>}
              </tr>
            ))}
          </tbody>
        </table>
      )
    },
    routes: async (app: FastifyInstance, opts: ConsoleOptions) => {
      // the scope is checked by the console's onRequest hook, before the body is read
      app.post<{ Params: { id: string } }>('/queues/reconciliation/:id/resolve', { config: { scope: 'money:write' } }, async (request, reply) => {
        const { id } = request.params
        try {
          const reason = reasonOf(request.body)
          const action = oneOf(request.body, 'action', RESOLVE_ACTIONS)
          const amount = amountField(request.body, 'amount', false)
          const audit = { ...auditContext(request, { action, ...(amount !== null ? { amount: String(amount) } : {}) }), reason }
          // the admin API's resolution: money moved once (on the exception's id), then marked with its audit record
          const r = await resolveException(opts.store, settlement, id, { action, reason, ...(amount !== null ? { amount } : {}) }, request.adminKey?.id ?? '', audit)
          const moved = r.exception.resolution?.amount ?? ''
          request.session.set('flash', {
            kind: 'ok',
            text: r.replayed
              ? `Exception ${id} was already resolved with ${action}: nothing more done.`
              : `Exception ${id} resolved: ${action}${moved !== '' && moved !== '0' ? ` ${minor(moved)}` : ', nothing moved'}.`
          })
        } catch (err) {
          request.session.set('flash', actionFailure(err, request))
        }
        return await reply.redirect(`${BASE}/queues#reconciliation`, 303)
      })
    }
  }
}
