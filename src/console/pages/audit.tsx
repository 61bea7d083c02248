// The audit trail: who changed what, when, why (the reason given in the console), with the state before and
// after; newest first, by time and key id, paged.
import type { FastifyInstance } from 'fastify'
import type { VNode } from 'preact'
import type { AuditRecord } from '../../domain/audit.js'
import { decodeAuditCursor } from '../../access/audit-trail.js'
import { BASE, customerHref, page } from '../html.js'
import { FormError, instantOf, text } from '../forms.js'
import { sendHtml, takeFlash, viewerOf } from '../respond.js'
import type { ConsoleOptions } from '../deps.js'

const PAGE_SIZE = 50

/** a target's ids in one order whatever the store kept them in: the customer first, then by name */
function targetEntries (target: Record<string, string>): Array<[string, string]> {
  return Object.entries(target).sort(([a], [b]) => (a === 'urn' ? -1 : b === 'urn' ? 1 : a.localeCompare(b)))
}

function stateText (v: Record<string, unknown> | null): string {
  return v === null ? '-' : JSON.stringify(v)
}

export function AuditTable ({ items }: { items: AuditRecord[] }): VNode {
  if (items.length === 0) return <p>No audit record.</p>
  return (
    <table>
      <thead>
        <tr><th scope='col'>At (UTC)</th><th scope='col'>Key</th><th scope='col'>Call</th><th scope='col'>Target</th><th scope='col'>Outcome</th><th scope='col'>Reason</th><th scope='col'>Before</th><th scope='col'>After</th></tr>
      </thead>
      <tbody>
        {items.map((r) => (
          <tr key={r.id}>
            <td><code>{new Date(r.atMs).toISOString()}</code></td>
            <td>{r.keyId}</td>
            <td><code>{r.route}</code></td>
            <td>{targetEntries(r.target).map(([k, v], i) => (
              <span key={k}>{i > 0 ? ', ' : ''}{k}={k === 'urn' ? <a href={customerHref(v)}>{v}</a> : v}</span>
            ))}
            </td>
            <td>{r.outcome}</td>
            <td>{r.reason ?? ''}</td>
            <td><code>{stateText(r.before)}</code></td>
            <td><code>{stateText(r.after)}</code></td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

export async function auditPages (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  app.get('/audit', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const f = { from: text(request.query, 'from'), to: text(request.query, 'to'), keyId: text(request.query, 'keyId'), urn: text(request.query, 'urn'), cursor: text(request.query, 'cursor') }
    let items: AuditRecord[] = []
    let next: string | null = null
    let error: string | null = null
    try {
      if (opts.audit === null) throw new FormError('', 'This store keeps no audit trail to read.')
      if (f.cursor !== '' && decodeAuditCursor(f.cursor) === null) throw new FormError('cursor', 'That page link is not one this console gave.')
      const fromMs = instantOf(f.from, 'from')
      const toMs = instantOf(f.to, 'to')
      const r = await opts.audit.search({
        limit: PAGE_SIZE,
        ...(fromMs !== undefined ? { fromMs } : {}),
        ...(toMs !== undefined ? { toMs } : {}),
        ...(f.keyId !== '' ? { keyId: f.keyId } : {}),
        ...(f.urn !== '' ? { urn: f.urn } : {}),
        ...(f.cursor !== '' ? { cursor: f.cursor } : {})
      })
      items = r.items
      next = r.nextCursor
    } catch (err) {
      if (!(err instanceof FormError)) throw err
      error = err.message
    }
    const q = new URLSearchParams()
    for (const [k, v] of Object.entries(f)) if (k !== 'cursor' && v !== '') q.set(k, v)
    if (next !== null) q.set('cursor', next)
    return sendHtml(reply, page({ title: 'Audit trail', section: 'audit', viewer, flash: error !== null ? { kind: 'error', text: error } : takeFlash(request) }, (
      <div>
        <h1>Audit trail</h1>
        <p class='muted'>Every change made through the admin API or this console, and every call refused for a missing scope; newest first.</p>
        <form class='search' method='get' action={`${BASE}/audit`} role='search' aria-label='Filter the audit trail'>
          <label for='a-from'>From (UTC)<input id='a-from' name='from' type='datetime-local' value={f.from} /></label>
          <label for='a-to'>To (UTC)<input id='a-to' name='to' type='datetime-local' value={f.to} /></label>
          <label for='a-key'>Key id<input id='a-key' name='keyId' value={f.keyId} maxLength={64} /></label>
          <label for='a-urn'>Customer (urn)<input id='a-urn' name='urn' value={f.urn} maxLength={20} /></label>
          <button type='submit'>Filter</button>
        </form>
        <AuditTable items={items} />
        {next !== null && <p class='pager'><a href={`${BASE}/audit?${q.toString()}`} rel='next'>Next page (older)</a></p>}
      </div>
    )), error !== null ? 400 : 200)
  })
}
