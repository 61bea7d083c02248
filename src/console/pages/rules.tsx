// The rules: the running version and when it was loaded, the files of RULES_DIR, each rule with its mode and
// what it checks, and how often each declined (enforce) or would have (shadow) since this instance started.
// A reload (scope rules:reload) is the admin API's reload, audited with the reason.
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { VNode } from 'preact'
import { auditAfterChange, auditContext } from '../../http/admin-auth.js'
import { BASE, Csrf, Facts, ReasonField, isoOf, page } from '../html.js'
import { minor } from '../words.js'
import { reasonOf } from '../forms.js'
import { sendHtml, takeFlash, viewerOf } from '../respond.js'
import { actionFailure } from '../actions.js'
import type { ConsoleOptions } from '../deps.js'

interface FileRow { name: string, bytes: number, modified: string }

async function ruleFiles (dir: string): Promise<FileRow[] | string> {
  try {
    const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.endsWith('.schema.json')).sort()
    return await Promise.all(names.map(async (name) => {
      const s = await stat(join(dir, name))
      return { name, bytes: s.size, modified: s.mtime.toISOString() }
    }))
  } catch (err) {
    return `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`
  }
}

interface RuleView { id: string, mode: string, description: string, when: string, limit: string, decline: string }

function ruleView (r: unknown): RuleView {
  const o = (r !== null && typeof r === 'object' ? r : {}) as Record<string, unknown>
  const then = (o.then ?? {}) as Record<string, unknown>
  return {
    id: typeof o.id === 'string' ? o.id : '?',
    mode: typeof o.mode === 'string' ? o.mode : 'enforce',
    description: typeof o.description === 'string' ? o.description : '',
    when: o.when === undefined ? 'always' : JSON.stringify(o.when),
    limit: o.limit === undefined ? '' : JSON.stringify(o.limit),
    decline: typeof then.decline === 'string' ? then.decline : ''
  }
}

async function hitsOf (opts: ConsoleOptions): Promise<Map<string, number>> {
  const m = new Map<string, number>()
  for (const v of (await opts.metrics.ruleHits.get()).values) m.set(`${String(v.labels.rule)}/${String(v.labels.mode)}`, v.value)
  return m
}

export async function rulesPages (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  app.get('/rules', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    const set = opts.rules.current()
    const files = await ruleFiles(opts.rulesDir)
    const hits = await hitsOf(opts)
    const rules = set.rules.map(ruleView)
    const body: VNode = (
      <div>
        <h1>Rules</h1>
        <Facts rows={[
          ['Running version', set.version],
          ['Loaded at (UTC)', isoOf(opts.rules.loadedAt())],
          ['Folder (RULES_DIR)', opts.rulesDir],
          ['Rules', String(rules.length)]
        ]} />
        {viewer.scopes.has('rules:reload') && (
          <form class='action' method='post' action={`${BASE}/rules/reload`} aria-label='Reload the rules'>
            <Csrf viewer={viewer} />
            <ReasonField id='reload-reason' />
            <button type='submit'>Reload from the files</button>
          </form>
        )}
        <h2>Files</h2>
        {typeof files === 'string'
          ? <p>The folder {files}.</p>
          : (
            <table>
              <thead><tr><th scope='col'>File</th><th scope='col' class='num'>Bytes</th><th scope='col'>Modified (UTC)</th></tr></thead>
              <tbody>{files.map((f) => <tr key={f.name}><td>{f.name}</td><td class='num'>{minor(f.bytes)}</td><td>{f.modified}</td></tr>)}</tbody>
            </table>
            )}
        <p class='muted'>The files as they are now; a file changed since the load above is not running until the next reload.</p>
        <h2>Rules in the running set</h2>
        <p class='muted'>Hits count since this instance started: decisions a rule declined (enforce), or would have declined (shadow). A shadow rule never changes a decision.</p>
        <table>
          <thead><tr><th scope='col'>Rule</th><th scope='col'>Mode</th><th scope='col'>When</th><th scope='col'>Limit</th><th scope='col'>Declines with</th><th scope='col' class='num'>Hits</th><th scope='col'>Decisions</th></tr></thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id} id={`rule-${r.id}`}>
                <th scope='row'>{r.id}{r.description !== '' && <div class='muted desc'>{r.description}</div>}</th>
                <td>{r.mode === 'shadow' ? <span class='tag'>shadow</span> : 'enforce'}</td>
                <td><code>{r.when}</code></td>
                <td><code>{r.limit}</code></td>
                <td>{r.decline}</td>
                <td class='num'>{minor(hits.get(`${r.id}/${r.mode === 'shadow' ? 'shadow' : 'enforce'}`) ?? 0)}</td>
                <td>{r.mode === 'shadow' ? '' : <a href={`${BASE}/decisions?rule=${encodeURIComponent(r.id)}`}>declined by it</a>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )
    return sendHtml(reply, page({ title: 'Rules', section: 'rules', viewer, flash: takeFlash(request) }, body))
  })

  app.post('/rules/reload', { config: { scope: 'rules:reload' } }, async (request, reply) => {
    try {
      const reason = reasonOf(request.body)
      const was = opts.rules.current().version
      // the admin API's reload, audited the same way, with the reason
      const r = await opts.rules.reload()
      await auditAfterChange(opts.store, request, r.ok
        ? { outcome: 'done', before: { version: was }, after: { version: r.version, rules: r.rules } }
        : { outcome: 'RULES_INVALID', before: { version: was }, after: { version: opts.rules.current().version } }, { ...auditContext(request), reason })
      request.session.set('flash', r.ok
        ? { kind: 'ok', text: `Reloaded: version ${r.version}, ${r.rules} rule(s).` }
        : { kind: 'error', text: `Refused, the running set stays: ${r.errors.map((e) => `${e.file}${e.ruleId !== null ? ` (${e.ruleId})` : ''}: ${e.reason}`).join('; ')}` })
    } catch (err) {
      request.session.set('flash', actionFailure(err, request))
    }
    return await reply.redirect(`${BASE}/rules`, 303)
  })
}
