// The console's page frame and the small parts every page uses. Preact renders on the server and escapes
// every text and attribute value: whatever a request or a party sent (a merchant name of `<script>…`) is
// shown as text. Nothing here writes raw HTML.
import { renderToString } from 'preact-render-to-string'
import type { ComponentChildren, VNode } from 'preact'
import type { Scope } from '../access/scopes.js'
import { codeText, codeWord } from './words.js'

export const BASE = '/admin/console'

export interface Flash { kind: 'ok' | 'error', text: string }

/** What every page knows of the person looking at it. */
export interface Viewer {
  keyId: string
  scopes: ReadonlySet<Scope>
  /** the form token of this session (@fastify/csrf-protection) */
  csrf: string
}

export interface PageOptions {
  title: string
  /** the menu entry this page is under */
  section: Section
  viewer: Viewer | null
  flash?: Flash | null
}

export type Section = 'decisions' | 'customers' | 'queues' | 'audit' | 'rules' | 'backtest' | 'sign-in' | 'none'

const MENU: Array<[Section, string, string]> = [
  ['decisions', 'Decisions', `${BASE}/decisions`],
  ['customers', 'Customers', `${BASE}/customers`],
  ['queues', 'Queues', `${BASE}/queues`],
  ['audit', 'Audit trail', `${BASE}/audit`],
  ['rules', 'Rules', `${BASE}/rules`],
  ['backtest', 'Backtest report', `${BASE}/backtest`]
]

/** The hidden field every form posts back (checked on the server against the session). */
export function Csrf ({ viewer }: { viewer: { csrf: string } }): VNode {
  return <input type='hidden' name='_csrf' value={viewer.csrf} />
}

function Layout ({ opts, children }: { opts: PageOptions, children: ComponentChildren }): VNode {
  const v = opts.viewer
  return (
    <html lang='en'>
      <head>
        <meta charset='utf-8' />
        <meta name='viewport' content='width=device-width, initial-scale=1' />
        <title>{`${opts.title} · extauth console`}</title>
        <link rel='stylesheet' href={`${BASE}/console.css`} />
      </head>
      <body>
        <a class='skip' href='#main'>Skip to content</a>
        <header class='top'>
          <a class='brand' href={`${BASE}`}>extauth console</a>
          {v !== null && (
            <nav aria-label='Main'>
              <ul>
                {MENU.map(([section, label, href]) => (
                  <li key={section}><a href={href} {...(section === opts.section ? { 'aria-current': 'page' } : {})}>{label}</a></li>
                ))}
              </ul>
            </nav>
          )}
          {v !== null && (
            <div class='who'>
              <span>Signed in with key <strong>{v.keyId}</strong></span>
              <form class='inline' method='post' action={`${BASE}/sign-out`}>
                <Csrf viewer={v} />
                <button type='submit'>Sign out</button>
              </form>
            </div>
          )}
        </header>
        <main id='main'>
          {opts.flash != null && <p class={`flash ${opts.flash.kind}`} role={opts.flash.kind === 'error' ? 'alert' : 'status'}>{opts.flash.text}</p>}
          {children}
        </main>
      </body>
    </html>
  )
}

/** A whole page, as the HTML text sent. */
export function page (opts: PageOptions, body: VNode): string {
  return '<!doctype html>' + renderToString(<Layout opts={opts}>{body}</Layout>)
}

/** A response code with its word and its meaning in plain words. */
export function Code ({ code, words = true }: { code: string, words?: boolean }): VNode {
  return (
    <span>
      <span class={code === '00' ? 'code ok' : 'code'} title={codeWord(code)}>{code}</span>
      {words && <span class='muted'> {codeText(code)}</span>}
    </span>
  )
}

/** Label-value pairs. */
export function Facts ({ rows }: { rows: Array<[string, ComponentChildren]> }): VNode {
  return (
    <dl class='facts'>
      {rows.map(([k, v]) => [<dt key={`t-${k}`}>{k}</dt>, <dd key={`d-${k}`}>{v}</dd>])}
    </dl>
  )
}

export function time (iso: string | null | undefined): string {
  return iso === null || iso === undefined || iso === '' ? '-' : iso
}

export function isoOf (ms: number | null | undefined): string {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : '-'
}

export function decisionHref (urn: string, reference: string): string {
  return `${BASE}/decisions/${encodeURIComponent(urn)}/${encodeURIComponent(reference)}`
}

export function customerHref (urn: string): string {
  return `${BASE}/customers/${encodeURIComponent(urn)}`
}

/** The reason every action asks for (kept in its audit record). */
export function ReasonField ({ id }: { id: string }): VNode {
  return (
    <label for={id}>Reason (kept in the audit trail)
      <input id={id} class='reason' name='reason' required minLength={3} maxLength={300} autocomplete='off' />
    </label>
  )
}
