// What waits for an operator, one section each: parked events (re-send), card-lifecycle calls that ended
// FAILED, and the sections other parts of the service add (ConsoleOptions.queueSections).
import type { FastifyInstance } from 'fastify'
import { auditAfterChange, auditContext } from '../../http/admin-auth.js'
import { BASE, Csrf, ReasonField, customerHref, isoOf, page, type Viewer } from '../html.js'
import { minor } from '../words.js'
import { reasonOf } from '../forms.js'
import { sendHtml, takeFlash, viewerOf } from '../respond.js'
import { actionFailure } from '../actions.js'
import type { ConsoleOptions, QueueSection } from '../deps.js'
import { lifecycleRows } from '../lifecycle.js'

/** the newest audit records read for the failed-calls section */
const AUDIT_SCAN_MAX = 500

function parkedSection (opts: ConsoleOptions): QueueSection {
  return {
    id: 'parked-events',
    title: 'Parked events',
    render: async (viewer: Viewer) => {
      if (opts.relay === undefined) return <p>Events are not sent (WEBHOOK_URL is not set): none can be parked.</p>
      const parked = await opts.relay.parkedEvents()
      if (parked.length === 0) return <p>No parked event: the receiver took every event.</p>
      const canSend = viewer.scopes.has('events')
      return (
        <table>
          <thead><tr><th scope='col'>Event</th><th scope='col'>Type</th><th scope='col'>Customer</th><th scope='col'>Parked at (UTC)</th><th scope='col' class='num'>Attempts</th><th scope='col'>Last error</th>{canSend && <th scope='col'>Re-send</th>}</tr></thead>
          <tbody>
            {parked.map((p) => {
              const urn = typeof p.event.data.urn === 'string' ? p.event.data.urn : ''
              return (
                <tr key={p.event.id}>
                  <td>{p.event.id}</td>
                  <td>{p.event.type}</td>
                  <td>{urn !== '' ? <a href={customerHref(urn)}>{urn}</a> : '-'}</td>
                  <td>{isoOf(p.parkedAtMs)}</td>
                  <td class='num'>{p.attempts}</td>
                  <td>{p.lastError}</td>
                  {canSend && (
                    <td>
                      <form class='action' method='post' action={`${BASE}/queues/events/${encodeURIComponent(p.event.id)}/resend`} aria-label={`Re-send ${p.event.id}`}>
                        <Csrf viewer={viewer} />
                        <ReasonField id={`rs-${p.event.id}`} />
                        <button type='submit'>Re-send</button>
                      </form>
                    </td>
                  )}
                </tr>
              )
            })}
          </tbody>
        </table>
      )
    }
  }
}

/** Lifecycle calls whose answer was FAILED (from the audit trail), with the record's status now. */
function failedLifecycleSection (opts: ConsoleOptions): QueueSection {
  return {
    id: 'failed-lifecycle',
    title: 'Failed card-lifecycle calls',
    render: async () => {
      if (opts.audit === null) return <p>This store keeps no audit trail.</p>
      // one read of the newest records (a merge over every bucket), filtered here
      const failed = (await opts.audit.search({ limit: AUDIT_SCAN_MAX })).items.filter((a) => a.outcome === 'FAILED' && a.route.startsWith('POST /v1/'))
      if (failed.length === 0) return <p>No card-lifecycle call ended FAILED among the latest {AUDIT_SCAN_MAX} audit records.</p>
      const rows = await lifecycleRows(opts, failed)
      return (
        <table>
          <caption class='muted'>Calls answered FAILED (latest first), with each record's status now: a FAILED record waits for someone to check the party's books and settle it</caption>
          <thead><tr><th scope='col'>Failed at (UTC)</th><th scope='col'>Kind</th><th scope='col'>Reference</th><th scope='col'>Customer</th><th scope='col' class='num'>Amount</th><th scope='col'>Status now</th><th scope='col'>Key</th></tr></thead>
          <tbody>
            {rows.map((l) => (
              <tr key={`${l.kind}:${l.id}`}><td><code>{l.at}</code></td><td>{l.kind}</td><td>{l.id}</td><td>{l.urn !== '' ? <a href={customerHref(l.urn)}>{l.urn}</a> : '-'}</td><td class='num'>{minor(l.amount)}</td><td>{l.status}</td><td>{l.keyId}</td></tr>
            ))}
          </tbody>
        </table>
      )
    }
  }
}

export async function queuePages (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  const sections = [parkedSection(opts), failedLifecycleSection(opts), ...(opts.queueSections ?? [])]

  app.get('/queues', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const parts = await Promise.all(sections.map(async (s) => ({ s, body: await s.render(viewer) })))
    return sendHtml(reply, page({ title: 'Queues', section: 'queues', viewer, flash: takeFlash(request) }, (
      <div>
        <h1>Queues</h1>
        <p class='muted'>What waits for an operator.</p>
        {parts.map(({ s, body }) => (
          <section key={s.id} id={s.id} aria-labelledby={`h-${s.id}`}>
            <h2 id={`h-${s.id}`}>{s.title}</h2>
            {body}
          </section>
        ))}
      </div>
    )))
  })

  app.post<{ Params: { id: string } }>('/queues/events/:id/resend', { config: { scope: 'events' } }, async (request, reply) => {
    const { id } = request.params
    try {
      const reason = reasonOf(request.body)
      if (opts.relay === undefined) throw new Error('events are not sent: WEBHOOK_URL is not set')
      // the admin API's re-send, audited the same way, with the reason
      const r = await opts.relay.resend(id)
      if (!r.found) {
        request.session.set('flash', { kind: 'error', text: `No parked event ${id} (already sent?).` })
      } else {
        await auditAfterChange(opts.store, request, { outcome: r.ok ? 'delivered' : 'failed', before: { parked: true }, after: { parked: !r.ok } }, { ...auditContext(request), reason })
        request.session.set('flash', r.ok ? { kind: 'ok', text: `Event ${id} delivered.` } : { kind: 'error', text: `The receiver did not take event ${id} (${r.detail}); it stays parked.` })
      }
    } catch (err) {
      request.session.set('flash', actionFailure(err, request))
    }
    return await reply.redirect(`${BASE}/queues`, 303)
  })

  for (const s of sections) if (s.routes !== undefined) await s.routes(app, opts)
}
