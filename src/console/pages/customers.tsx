// A customer: balance, cards with their status and controls, recent decisions, lifecycle records and the
// audit of changes made to them; and the actions an operator takes on them, each with a reason: credit,
// debit, block or unblock a card, change its controls. Each action calls the store operation the admin
// API's route calls, with the same audit context plus the reason.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { VNode } from 'preact'
import { auditContext } from '../../http/admin-auth.js'
import { CARD_STATUSES, CUSTOMER_STATUSES, type Customer } from '../../store/types.js'
import { CONTROL_KINDS, effectiveControls, type CardControls, type ControlEntries, type ControlEntry, type ControlKind } from '../../domain/controls.js'
import { parseControls } from '../../controls/validate.js'
import { BASE, Csrf, Facts, ReasonField, customerHref, page, type Viewer } from '../html.js'
import { minor } from '../words.js'
import { FormError, amountField, oneOf, reasonOf, referenceField, text } from '../forms.js'
import { sendHtml, takeFlash, viewerOf } from '../respond.js'
import { actionFailure } from '../actions.js'
import { DecisionTable } from './decisions.js'
import { customerLifecycleRows } from '../lifecycle.js'
import { AuditTable } from './audit.js'
import type { ConsoleOptions } from '../deps.js'

const urnOk = (urn: string): boolean => urn.length >= 1 && urn.length <= 20
const last4Ok = (last4: string): boolean => /^[0-9]{4}$/.test(last4)

function limitText (v: number | undefined): string {
  return v === undefined ? 'no limit' : minor(v)
}

function ControlsTable ({ controls }: { controls: CardControls }): VNode {
  return (
    <table>
      <thead><tr><th scope='col'>Kind of use</th><th scope='col'>Enabled</th><th scope='col' class='num'>Per transaction max</th><th scope='col' class='num'>Daily max</th></tr></thead>
      <tbody>
        {CONTROL_KINDS.map((k) => (
          <tr key={k}><th scope='row'>{k}</th><td>{controls[k].enabled ? 'on' : 'off'}</td><td class='num'>{limitText(controls[k].perTransactionMax)}</td><td class='num'>{limitText(controls[k].dailyMax)}</td></tr>
        ))}
      </tbody>
    </table>
  )
}

function CardStatusForm ({ viewer, urn, last4, status }: { viewer: Viewer, urn: string, last4: string, status: string }): VNode | null {
  if (!viewer.scopes.has('customers:write')) return null
  return (
    <form class='action' method='post' action={`${customerHref(urn)}/cards/${last4}/status`}>
      <Csrf viewer={viewer} />
      <label for={`st-${last4}`}>Card status
        <select id={`st-${last4}`} name='status'>
          {CARD_STATUSES.map((s) => <option key={s} value={s} selected={s === status}>{s}</option>)}
        </select>
      </label>
      <ReasonField id={`st-reason-${last4}`} />
      <button type='submit'>Set status</button>
    </form>
  )
}

/** The controls as a table a person with controls:write can edit in place: one row a kind of use. */
function ControlsForm ({ viewer, urn, last4, controls }: { viewer: Viewer, urn: string, last4: string, controls: CardControls }): VNode {
  const id = (k: string, f: string): string => `c-${last4}-${k}-${f}`
  return (
    <form class='controls' method='post' action={`${customerHref(urn)}/cards/${last4}/controls`} aria-label={`Change the controls of card ${last4}`}>
      <Csrf viewer={viewer} />
      <table>
        <caption class='muted'>Controls of card {last4} (amounts in minor units; empty: no limit)</caption>
        <thead><tr><th scope='col'>Kind of use</th><th scope='col'>Enabled</th><th scope='col'>Per transaction max</th><th scope='col'>Daily max</th></tr></thead>
        <tbody>
          {CONTROL_KINDS.map((k) => (
            <tr key={k}>
              <th scope='row'>{k}</th>
              <td><input type='checkbox' id={id(k, 'on')} name={`${k}.enabled`} value='on' checked={controls[k].enabled} aria-label={`${k} enabled`} /></td>
              <td><input id={id(k, 'p')} name={`${k}.perTransactionMax`} inputMode='numeric' pattern='[0-9]*' maxLength={15} value={controls[k].perTransactionMax === undefined ? '' : String(controls[k].perTransactionMax)} placeholder='no limit' aria-label={`${k} per transaction max`} /></td>
              <td><input id={id(k, 'd')} name={`${k}.dailyMax`} inputMode='numeric' pattern='[0-9]*' maxLength={15} value={controls[k].dailyMax === undefined ? '' : String(controls[k].dailyMax)} placeholder='no limit' aria-label={`${k} daily max`} /></td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class='row'>
        <ReasonField id={`c-reason-${last4}`} />
        <button type='submit'>Save controls</button>
      </div>
    </form>
  )
}

function CustomerStatusForm ({ viewer, c }: { viewer: Viewer, c: Customer }): VNode | null {
  if (!viewer.scopes.has('customers:write')) return null
  return (
    <form class='action' method='post' action={`${customerHref(c.urn)}/status`} aria-label='Customer status'>
      <Csrf viewer={viewer} />
      <label for='cs-status'>Customer status
        <select id='cs-status' name='status'>
          {CUSTOMER_STATUSES.map((s) => <option key={s} value={s} selected={s === c.status}>{s}</option>)}
        </select>
      </label>
      <ReasonField id='cs-reason' />
      <button type='submit'>Set status</button>
    </form>
  )
}

function MoneyForm ({ viewer, urn, kind }: { viewer: Viewer, urn: string, kind: 'credit' | 'debit' }): VNode {
  const id = `${kind}-`
  return (
    <form class='action' method='post' action={`${customerHref(urn)}/${kind}`} aria-label={kind === 'credit' ? 'Credit' : 'Debit'}>
      <Csrf viewer={viewer} />
      <label for={`${id}amount`}>Amount (minor units)
        <input id={`${id}amount`} name='amount' required inputMode='numeric' pattern='[0-9]*' maxLength={15} />
      </label>
      <label for={`${id}reference`}>Reference (the same again is a replay)
        <input id={`${id}reference`} name='reference' required maxLength={50} value={`console-${randomBytes(6).toString('hex')}`} />
      </label>
      <ReasonField id={`${id}reason`} />
      <button type='submit' class={kind === 'debit' ? 'danger' : ''}>{kind === 'credit' ? 'Credit' : 'Debit'}</button>
    </form>
  )
}

async function customerPage (opts: ConsoleOptions, viewer: Viewer, c: Customer): Promise<VNode> {
  const cards = await Promise.all(Object.entries(c.cards).sort(([a], [b]) => a.localeCompare(b)).map(async ([last4, status]) => ({
    last4, status, controls: effectiveControls(await opts.store.getCardControls(c.urn, last4), opts.controlDefaults)
  })))
  const decisions = opts.journal === null ? [] : (await opts.journal.search({ urn: c.urn, limit: 10 })).items
  const audit = opts.audit === null ? [] : (await opts.audit.search({ urn: c.urn, limit: 50 })).items
  const lifecycle = await customerLifecycleRows(opts, c.urn, audit)
  const money = viewer.scopes.has('money:write')
  return (
    <div>
      <h1>Customer {c.urn}</h1>
      <Facts rows={[
        ['Status', c.status],
        ['Customer id', c.customerId ?? '-'],
        ['Available', minor(c.available)],
        ['Held', minor(c.held)],
        ['Ledger', minor(c.available + c.held)]
      ]} />
      <CustomerStatusForm viewer={viewer} c={c} />
      {money && (
        <section aria-labelledby='h-money'>
          <h2 id='h-money'>Money</h2>
          <div class='actions'>
            <div><h3>Credit</h3><MoneyForm viewer={viewer} urn={c.urn} kind='credit' /></div>
            <div><h3>Debit</h3><MoneyForm viewer={viewer} urn={c.urn} kind='debit' /></div>
          </div>
        </section>
      )}
      <h2>Cards</h2>
      {cards.length === 0 && <p>No card registered.</p>}
      {cards.map((card) => (
        <section key={card.last4} aria-labelledby={`h-card-${card.last4}`}>
          <h3 id={`h-card-${card.last4}`}>Card ending {card.last4}: <span class='tag'>{card.status}</span></h3>
          <CardStatusForm viewer={viewer} urn={c.urn} last4={card.last4} status={card.status} />
          {viewer.scopes.has('controls:write')
            ? <ControlsForm viewer={viewer} urn={c.urn} last4={card.last4} controls={card.controls} />
            : <ControlsTable controls={card.controls} />}
        </section>
      ))}
      <h2>Recent decisions</h2>
      <DecisionTable items={decisions} showUrn={false} />
      <p><a href={`${BASE}/decisions?urn=${encodeURIComponent(c.urn)}`}>All of this customer's decisions</a></p>
      <h2>Card-lifecycle records</h2>
      {lifecycle.length === 0
        ? <p>No load, transfer or unload of this customer is kept.</p>
        : (
          <table>
            <thead><tr><th scope='col'>Kind</th><th scope='col'>Reference</th><th scope='col'>Other side</th><th scope='col'>Status now</th><th scope='col' class='num'>Amount</th><th scope='col'>Started (UTC)</th></tr></thead>
            <tbody>{lifecycle.map((l) => <tr key={`${l.kind}:${l.id}`}><td>{l.kind}</td><td>{l.id}</td><td>{l.side === '' ? '-' : l.side}</td><td>{l.status}</td><td class='num'>{minor(l.amount)}</td><td>{l.at}</td></tr>)}</tbody>
          </table>
          )}
      <h2>Audit</h2>
      <AuditTable items={audit} />
    </div>
  )
}

/** The controls form's values, changed against the effective ones: only what differs is sent to the store. */
export function controlsPatch (body: unknown, now: CardControls): ControlEntries {
  const patch: ControlEntries = {}
  for (const k of CONTROL_KINDS) {
    const entry: ControlEntry = {}
    const enabled = text(body, `${k}.enabled`) === 'on'
    if (enabled !== now[k].enabled) entry.enabled = enabled
    for (const f of ['perTransactionMax', 'dailyMax'] as const) {
      const v = text(body, `${k}.${f}`)
      if (v !== '' && !/^[0-9]{1,15}$/.test(v)) throw new FormError(`${k}.${f}`, `${k} ${f}: "${v}" is not an amount (digits, minor units; empty for no limit).`)
      const want = v === '' ? null : Number(v)
      if (want !== (now[k][f] ?? null)) entry[f] = want
    }
    if (Object.keys(entry).length > 0) patch[k as ControlKind] = entry
  }
  // the admin API's own check of a controls body (limits within range, the shape)
  const parsed = parseControls(patch)
  if (!parsed.ok) throw new FormError(parsed.field, `${parsed.field} ${parsed.message}`)
  return parsed.entries
}

export async function customerPages (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  app.get('/customers', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const urn = text(request.query, 'urn')
    if (urn !== '' && urnOk(urn)) return await reply.redirect(customerHref(urn), 303)
    return sendHtml(reply, page({ title: 'Customers', section: 'customers', viewer, flash: takeFlash(request) }, (
      <div>
        <h1>Customers</h1>
        <form class='search' method='get' action={`${BASE}/customers`} role='search' aria-label='Find a customer'>
          <label for='c-urn'>Customer (urn)<input id='c-urn' name='urn' required maxLength={20} value={urn} /></label>
          <button type='submit'>Open</button>
        </form>
      </div>
    )))
  })

  app.get<{ Params: { urn: string } }>('/customers/:urn', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const { urn } = request.params
    const c = urnOk(urn) ? await opts.store.getCustomer(urn) : null
    if (c === null) {
      return sendHtml(reply, page({ title: 'Customer not found', section: 'customers', viewer, flash: takeFlash(request) }, (
        <div><h1>Customer not found</h1><p>There is no customer {urn}.</p><p><a href={`${BASE}/customers`}>Find another</a></p></div>
      )), 404)
    }
    return sendHtml(reply, page({ title: `Customer ${urn}`, section: 'customers', viewer, flash: takeFlash(request) }, await customerPage(opts, viewer, c)))
  })

  for (const kind of ['credit', 'debit'] as const) {
    app.post<{ Params: { urn: string } }>(`/customers/:urn/${kind}`, { config: { scope: 'money:write' } }, async (request, reply) => {
      const { urn } = request.params
      try {
        const reason = reasonOf(request.body)
        const amount = amountField(request.body) as number
        const reference = referenceField(request.body)
        const audit = { ...auditContext(request, { reference, amount: String(amount) }), reason }
        // the admin API's credit and debit: one store step with its audit record
        const r = kind === 'credit'
          ? await opts.store.credit(urn, amount, reference, undefined, audit)
          : await opts.store.debit(urn, amount, reference, undefined, audit)
        request.session.set('flash', {
          kind: 'ok',
          text: r.replayed ? `Reference ${reference} was already used: nothing more done (available ${minor(r.available)}).` : `${kind === 'credit' ? 'Credited' : 'Debited'} ${minor(amount)}; available balance now ${minor(r.available)}.`
        })
      } catch (err) {
        request.session.set('flash', actionFailure(err, request))
      }
      return await reply.redirect(customerHref(urn), 303)
    })
  }

  app.post<{ Params: { urn: string } }>('/customers/:urn/status', { config: { scope: 'customers:write' } }, async (request, reply) => {
    const { urn } = request.params
    try {
      const reason = reasonOf(request.body)
      const status = oneOf(request.body, 'status', CUSTOMER_STATUSES)
      if (await opts.store.getCustomer(urn) === null) throw new FormError('urn', `There is no customer ${urn}.`)
      // the admin API's PUT of a customer, status only: one store step with its audit record
      await opts.store.putCustomer(urn, { status }, { ...auditContext(request), reason })
      request.session.set('flash', { kind: 'ok', text: `Customer ${urn} is now ${status}.` })
    } catch (err) {
      request.session.set('flash', actionFailure(err, request))
    }
    return await reply.redirect(customerHref(urn), 303)
  })

  app.post<{ Params: { urn: string, last4: string } }>('/customers/:urn/cards/:last4/status', { config: { scope: 'customers:write' } }, async (request, reply) => {
    const { urn, last4 } = request.params
    try {
      if (!last4Ok(last4)) throw new FormError('last4', 'A card is four digits.')
      const reason = reasonOf(request.body)
      const status = oneOf(request.body, 'status', CARD_STATUSES)
      await opts.store.putCard(urn, last4, status, { ...auditContext(request), reason })
      request.session.set('flash', { kind: 'ok', text: `Card ${last4} is now ${status}.` })
    } catch (err) {
      request.session.set('flash', actionFailure(err, request))
    }
    return await reply.redirect(customerHref(urn), 303)
  })

  app.post<{ Params: { urn: string, last4: string } }>('/customers/:urn/cards/:last4/controls', { config: { scope: 'controls:write' } }, async (request, reply) => {
    const { urn, last4 } = request.params
    try {
      if (!last4Ok(last4)) throw new FormError('last4', 'A card is four digits.')
      const reason = reasonOf(request.body)
      const now = effectiveControls(await opts.store.getCardControls(urn, last4), opts.controlDefaults)
      const patch = controlsPatch(request.body, now)
      if (Object.keys(patch).length === 0) {
        request.session.set('flash', { kind: 'ok', text: 'Nothing changed in the form: nothing was saved.' })
      } else {
        // the admin API's PATCH: the same store step (card.controls.updated event and audit record in it)
        await opts.store.patchCardControls(urn, last4, patch, { ...auditContext(request), reason })
        request.log.info({ urn, last4, patch }, 'card controls updated')
        request.session.set('flash', { kind: 'ok', text: `Controls of card ${last4} saved: ${Object.keys(patch).join(', ')} changed.` })
      }
    } catch (err) {
      request.session.set('flash', actionFailure(err, request))
    }
    return await reply.redirect(customerHref(urn), 303)
  })
}
