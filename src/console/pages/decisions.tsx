// Finding a decision and reading it: the search (reference, urn, time, code, reason, rule; newest first,
// paged), and a decision's page: the answer, why (the rule or control and the values it saw, the window's use,
// the balance seen), timings, its chain (authorization, clearing by the platform's statement, expiry of its hold,
// reversal, release on the deadline) and its events.
// A reversal is the one action here (scope money:write).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { VNode } from 'preact'
import { decisionEntryOf, type DecisionEntry } from '../../store/decision-entry.js'
import { decodeCursor } from '../../journal/source.js'
import type { DecisionRecord } from '../../store/types.js'
import { auditContext } from '../../http/admin-auth.js'
import { BASE, Code, Csrf, Facts, ReasonField, customerHref, decisionHref, isoOf, page, time, type Viewer } from '../html.js'
import { CODES, REASONS, minor, reasonText } from '../words.js'
import { FormError, amountField, instantOf, reasonOf, text } from '../forms.js'
import { sendHtml, takeFlash, viewerOf } from '../respond.js'
import { actionFailure } from '../actions.js'
import type { ConsoleOptions } from '../deps.js'
import { settlementFor } from '../../settlement/for-store.js'
import type { DecisionSettlement } from '../../settlement/types.js'

const PAGE_SIZE = 25

interface SearchForm { reference: string, urn: string, code: string, reason: string, rule: string, from: string, to: string, cursor: string }

function searchFormOf (q: unknown): SearchForm {
  return {
    reference: text(q, 'reference'), urn: text(q, 'urn'), code: text(q, 'code'), reason: text(q, 'reason'),
    rule: text(q, 'rule'), from: text(q, 'from'), to: text(q, 'to'), cursor: text(q, 'cursor')
  }
}

function SearchFormView ({ f }: { f: SearchForm }): VNode {
  return (
    <form class='search' method='get' action={`${BASE}/decisions`} role='search' aria-label='Find decisions'>
      <label for='s-reference'>Reference<input id='s-reference' name='reference' value={f.reference} maxLength={50} /></label>
      <label for='s-urn'>Customer (urn)<input id='s-urn' name='urn' value={f.urn} maxLength={20} /></label>
      <label for='s-from'>From (UTC)<input id='s-from' name='from' type='datetime-local' value={f.from} /></label>
      <label for='s-to'>To (UTC)<input id='s-to' name='to' type='datetime-local' value={f.to} /></label>
      <label for='s-code'>Code
        <select id='s-code' name='code'>
          <option value=''>any</option>
          {CODES.map((c) => <option key={c} value={c} selected={c === f.code}>{c}</option>)}
        </select>
      </label>
      <label for='s-reason'>Reason
        <select id='s-reason' name='reason'>
          <option value=''>any</option>
          {REASONS.map((r) => <option key={r} value={r} selected={r === f.reason}>{r}</option>)}
        </select>
      </label>
      <label for='s-rule'>Rule id<input id='s-rule' name='rule' value={f.rule} maxLength={100} /></label>
      <button type='submit'>Search</button>
    </form>
  )
}

function deciderOf (e: DecisionEntry): string {
  if (e.control !== null) return `control ${e.control.kind} (${e.control.check})`
  return e.ruleId ?? ''
}

export function DecisionTable ({ items, showUrn = true }: { items: DecisionEntry[], showUrn?: boolean }): VNode {
  if (items.length === 0) return <p>No decision found.</p>
  return (
    <table>
      <caption class='muted'>{items.length} decision(s), newest first</caption>
      <thead>
        <tr>
          <th scope='col'>Arrived (UTC)</th><th scope='col'>Reference</th>{showUrn && <th scope='col'>Customer</th>}<th scope='col'>Card</th>
          <th scope='col' class='num'>Debit</th><th scope='col'>Answer</th><th scope='col'>Reason</th><th scope='col'>Rule or control</th><th scope='col'>Merchant</th>
        </tr>
      </thead>
      <tbody>
        {items.map((e) => (
          <tr key={`${e.urn}/${e.reference}`}>
            <td><code>{e.arrivedAt}</code></td>
            <td><a href={decisionHref(e.urn, e.reference)}>{e.reference}</a></td>
            {showUrn && <td><a href={customerHref(e.urn)}>{e.urn}</a></td>}
            <td>{e.last4}</td>
            <td class='num'>{minor(e.debit)}</td>
            <td><Code code={e.code} words={false} /></td>
            <td>{e.reason}</td>
            <td>{deciderOf(e)}</td>
            <td>{e.request.merchantName ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

async function search (opts: ConsoleOptions, f: SearchForm): Promise<{ items: DecisionEntry[], next: string | null }> {
  const journal = opts.journal
  if (journal === null) throw new FormError('', 'This store keeps no decision journal to search.')
  if (f.reference !== '') {
    const all = await journal.byReference(f.reference)
    return { items: f.urn === '' ? all : all.filter((e) => e.urn === f.urn), next: null }
  }
  if (f.cursor !== '' && decodeCursor(f.cursor) === null) throw new FormError('cursor', 'That page link is not one this console gave; search again.')
  if (f.code !== '' && !/^[0-9]{2}$/.test(f.code)) throw new FormError('code', 'A code is two digits.')
  const fromMs = instantOf(f.from, 'from')
  const toMs = instantOf(f.to, 'to')
  const page = await journal.search({
    limit: PAGE_SIZE,
    ...(f.urn !== '' ? { urn: f.urn } : {}),
    ...(f.code !== '' ? { code: f.code } : {}),
    ...(f.reason !== '' ? { reason: f.reason } : {}),
    ...(f.rule !== '' ? { rule: f.rule } : {}),
    ...(fromMs !== undefined ? { fromMs } : {}),
    ...(toMs !== undefined ? { toMs } : {}),
    ...(f.cursor !== '' ? { cursor: f.cursor } : {})
  })
  return { items: page.items, next: page.nextCursor }
}

function nextHref (f: SearchForm, cursor: string): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(f) as Array<[string, string]>) if (k !== 'cursor' && v !== '') q.set(k, v)
  q.set('cursor', cursor)
  return `${BASE}/decisions?${q.toString()}`
}

/** What a decision was decided on, in words and the values the check saw. */
function Explanation ({ e, rec }: { e: DecisionEntry, rec: DecisionRecord }): VNode {
  const rows: Array<[string, VNode | string]> = [
    ['Answer', <Code key='c' code={e.code} />],
    ['Reason', <span key='r'>{e.reason}<span class='muted'> {reasonText(e.reason)}</span></span>]
  ]
  if (e.ruleId !== null) rows.push(['Deciding rule', <a key='rule' href={`${BASE}/rules#rule-${e.ruleId}`}>{e.ruleId}</a>])
  if (e.control !== null) {
    const c = e.control
    rows.push(['Deciding card control', `${c.kind}: ${c.check === 'enabled' ? 'switched off' : c.check}`])
    if (c.limit !== null) rows.push(['Control limit', minor(c.limit)])
    if (c.totalBefore !== null) rows.push(['Today\'s total before', minor(c.totalBefore)])
    rows.push(['Debit asked', minor(c.debit)])
  }
  if (e.limit !== null) {
    rows.push(['Limit rule', e.limit.ruleId])
    rows.push(['Window use before', `${minor(e.limit.usedBefore)} of max ${minor(e.limit.max)}`])
  }
  if (e.availableSeen !== null) rows.push(['Available balance seen', minor(e.availableSeen)])
  if (e.customerStatus !== null) rows.push(['Customer status seen', e.customerStatus])
  if (e.cardStatus !== null) rows.push(['Card status seen', e.cardStatus])
  rows.push(['Shadow rules that would have declined', e.shadowHits.length === 0 ? 'none' : e.shadowHits.join(', ')])
  rows.push(['Rules version', e.rulesVersion || '-'])
  if (e.answeredOnDeadline) rows.push(['On the deadline', `answered 05 at the deadline; the store had decided ${rec.decidedCode ?? 'nothing'}`])
  return <Facts rows={rows} />
}

function ControlsSeen ({ e }: { e: DecisionEntry }): VNode | null {
  if (e.controls === null || Object.keys(e.controls).length === 0) return null
  return (
    <table>
      <caption class='muted'>Card controls that applied, as they stood</caption>
      <thead><tr><th scope='col'>Kind</th><th scope='col'>Enabled</th><th scope='col' class='num'>Per transaction max</th><th scope='col' class='num'>Daily max</th></tr></thead>
      <tbody>
        {Object.entries(e.controls).map(([kind, s]) => (
          <tr key={kind}><td>{kind}</td><td>{s.enabled ? 'yes' : 'no'}</td><td class='num'>{s.perTransactionMax === null ? 'no limit' : minor(s.perTransactionMax)}</td><td class='num'>{s.dailyMax === null ? 'no limit' : minor(s.dailyMax)}</td></tr>
        ))}
      </tbody>
    </table>
  )
}

interface EventRow { type: string, state: string }

/** The events this decision wrote, and where each is: waiting in the outbox, parked after every retry, or sent. */
async function eventsOf (opts: ConsoleOptions, rec: DecisionRecord, settled: DecisionSettlement): Promise<EventRow[]> {
  const types = ['decision.created']
  if (rec.reversal !== null) types.push('decision.reversed')
  if (rec.answeredOnDeadline) types.push('decision.released')
  if (settled.cleared > 0) types.push('settlement.posted')
  if (settled.expiredAtMs !== null) types.push('authorization.expired')
  const waiting = (await opts.store.readDecisionStream(rec.urn, 5000)).filter((e) => e.urn === rec.urn && e.reference === rec.reference)
  const parked = opts.relay === undefined
    ? []
    : (await opts.relay.parkedEvents()).filter((p) => p.event.data.urn === rec.urn && p.event.data.reference === rec.reference)
  return types.map((type) => {
    const p = parked.find((x) => x.event.type === type)
    if (p !== undefined) return { type, state: `parked after ${p.attempts} attempts (${p.lastError}); re-send it from Queues` }
    if (waiting.some((w) => w.type === type)) return { type, state: opts.relay === undefined ? 'in the outbox (WEBHOOK_URL is not set: nothing is sent)' : 'waiting to be sent' }
    return { type, state: opts.relay === undefined ? 'not in the outbox (no WEBHOOK_URL)' : 'delivered' }
  })
}

function ReverseForm ({ viewer, rec }: { viewer: Viewer, rec: DecisionRecord }): VNode | null {
  if (!viewer.scopes.has('money:write') || rec.code !== '00' || rec.reversal !== null || Number(rec.held) <= 0) return null
  return (
    <section aria-labelledby='h-reverse'>
      <h2 id='h-reverse'>Reverse</h2>
      <form class='action' method='post' action={`${decisionHref(rec.urn, rec.reference)}/reverse`}>
        <Csrf viewer={viewer} />
        <label for='rev-amount'>Amount to release (minor units; empty: all {minor(rec.held)} still held)
          <input id='rev-amount' name='amount' inputMode='numeric' pattern='[0-9]*' maxLength={15} />
        </label>
        <ReasonField id='rev-reason' />
        <button type='submit' class='danger'>Reverse</button>
      </form>
    </section>
  )
}

export async function decisionPages (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  app.get('/decisions', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const f = searchFormOf(request.query)
    const asked = Object.entries(f).some(([, v]) => v !== '')
    let result: { items: DecisionEntry[], next: string | null } | null = null
    let error: string | null = null
    try {
      result = await search(opts, f)
    } catch (err) {
      if (!(err instanceof FormError)) throw err
      error = err.message
    }
    return sendHtml(reply, page({ title: 'Decisions', section: 'decisions', viewer, flash: error !== null ? { kind: 'error', text: error } : takeFlash(request) }, (
      <div>
        <h1>Decisions</h1>
        <p class='muted'>Find a decision by its reference, or search by customer, time, answer code, reason and rule. Newest first.</p>
        <SearchFormView f={f} />
        {result !== null && <section aria-label='Results'>
          {!asked && <h2>Latest decisions</h2>}
          <DecisionTable items={result.items} />
          {result.next !== null && <p class='pager'><a href={nextHref(f, result.next)} rel='next'>Next page (older)</a></p>}
        </section>}
      </div>
    )), error !== null ? 400 : 200)
  })

  app.get<{ Params: { urn: string, ref: string } }>('/decisions/:urn/:ref', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const { urn, ref } = request.params
    const rec = await opts.store.getDecision(urn, ref)
    if (rec === null) {
      return sendHtml(reply, page({ title: 'Decision not found', section: 'decisions', viewer }, (
        <div><h1>Decision not found</h1><p>No decision {ref} is kept for customer {urn} (unknown, or older than the retention).</p><p><a href={`${BASE}/decisions?reference=${encodeURIComponent(ref)}`}>Search this reference for every customer</a></p></div>
      )), 404)
    }
    const e = decisionEntryOf(rec)
    const customer = await opts.store.getCustomer(urn)
    const settled = rec.code === '00' ? await settlementFor(opts.store).decisionSettlement(urn, ref) : { cleared: 0, expiredAtMs: null }
    const events = await eventsOf(opts, rec, settled)
    const req = Object.entries(e.request)
    return sendHtml(reply, page({ title: `Decision ${ref}`, section: 'decisions', viewer, flash: takeFlash(request) }, (
      <div>
        <h1>Decision {ref}</h1>
        <Facts rows={[
          ['Customer', <a key='u' href={customerHref(urn)}>{urn}</a>],
          ['Card', e.last4],
          ['Debit asked', minor(e.debit)],
          ['Held now', minor(rec.held)],
          ['Released', minor(rec.released)],
          ['Customer\'s available balance now', customer === null ? 'customer not found' : minor(customer.available)]
        ]} />
        <h2>Why</h2>
        <Explanation e={e} rec={rec} />
        <ControlsSeen e={e} />
        <h2>Timings (UTC)</h2>
        <Facts rows={[
          ['Arrived', e.arrivedAt],
          ...(rec.attemptArrivedAtMs !== undefined ? [['Latest attempt arrived', isoOf(rec.attemptArrivedAtMs)] as [string, string]] : []),
          ['Decided (store clock)', time(e.decidedAt)],
          ['Deadline', isoOf(rec.deadlineAtMs)],
          ['Took', rec.decidedAtMs > 0 ? `${rec.decidedAtMs - rec.arrivedAtMs} ms from arrival to the store's decision` : '-'],
          ['Kept until', isoOf(rec.expiresAtMs ?? null)]
        ]} />
        <h2>Chain</h2>
        <ol>
          <li>Authorization: answered <Code code={e.code} words={false} /> at {time(e.decidedAt)}{e.code === '00' ? `, ${minor(e.debit)} held` : ''}</li>
          {rec.answeredOnDeadline && <li>Released on the deadline: answered 05, nothing kept</li>}
          {settled.cleared > 0 && <li>Cleared by the platform's statement: {minor(String(settled.cleared))} posted{settled.cleared !== Number(e.debit) ? ` (${settled.cleared < Number(e.debit) ? 'less' : 'more'} than the ${minor(e.debit)} authorized)` : ''}</li>}
          {settled.expiredAtMs !== null && <li>Hold expired at {isoOf(settled.expiredAtMs)}: released{settled.cleared > 0 ? '' : ', nothing cleared by then'}</li>}
          {rec.reversal !== null && <li>Reversal: {minor(rec.reversal.amount)} released at {isoOf(rec.reversal.atMs)}</li>}
        </ol>
        <h2>Events</h2>
        <table>
          <thead><tr><th scope='col'>Event</th><th scope='col'>Delivery</th></tr></thead>
          <tbody>{events.map((ev) => <tr key={ev.type}><td>{ev.type}</td><td>{ev.state}</td></tr>)}</tbody>
        </table>
        <h2>Request as received</h2>
        <table>
          <thead><tr><th scope='col'>Field</th><th scope='col'>Value</th></tr></thead>
          <tbody>{req.map(([k, v]) => <tr key={k}><th scope='row'>{k}</th><td>{v}</td></tr>)}</tbody>
        </table>
        <ReverseForm viewer={viewer} rec={rec} />
      </div>
    )))
  })

  app.post<{ Params: { urn: string, ref: string } }>('/decisions/:urn/:ref/reverse', { config: { scope: 'money:write' } }, async (request, reply) => {
    const { urn, ref } = request.params
    const back = decisionHref(urn, ref)
    try {
      const reason = reasonOf(request.body)
      const amount = amountField(request.body, 'amount', false)
      const audit = { ...auditContext(request, amount === null ? {} : { amount: String(amount) }), reason }
      // the admin API's reversal: the same store step, audited in it
      const r = await opts.store.reverse(urn, ref, amount, audit)
      request.session.set('flash', { kind: 'ok', text: r.replayed ? `Already reversed: nothing more released (available ${minor(r.available)}).` : `Released ${minor(r.released)}; available balance now ${minor(r.available)}.` })
    } catch (err) {
      request.session.set('flash', actionFailure(err, request as FastifyRequest))
    }
    return await reply.redirect(back, 303)
  })
}
