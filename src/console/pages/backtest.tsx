// The backtest report viewer: the JSON of `extauth rules backtest --json` (contract §10), pasted or uploaded,
// shown as the tables the command prints (the CLI's own formatReport, and the same figures as tables).
// Reading a report changes nothing; the form still carries its token like every form.
import type { FastifyInstance } from 'fastify'
import type { VNode } from 'preact'
import { formatReport, type BacktestReport, type Warning } from '../../backtest/report.js'
import { moneyWords } from '../../backtest/money-words.js'
import type { ConsoleOptions } from '../deps.js'
import { strictAjv } from '../../strict-ajv.js'
import { BASE, Csrf, Facts, decisionHref, page, type Viewer } from '../html.js'
import { minor } from '../words.js'
import { sendHtml, viewerOf } from '../respond.js'
import { REPORT_BYTES_MAX } from '../limits.js'

const totals = { type: 'object', required: ['count', 'amount'], properties: { count: { type: 'integer' }, amount: { type: 'integer' } } }
const withSamples = { ...totals, required: ['count', 'amount', 'samples'], properties: { ...totals.properties, samples: { type: 'array', items: { type: 'string' } } } }
const str = { type: 'string' }
const strOrNull = { type: ['string', 'null'] }

/** The parts of the report the page shows; fields it does not show may be there too. */
const reportSchema = {
  type: 'object',
  required: ['from', 'to', 'decisions', 'baseline', 'changes', 'rules', 'changed'],
  properties: {
    from: str,
    to: str,
    decisions: { type: 'integer' },
    baseline: {
      type: 'object',
      required: ['reproduced', 'unreproduced'],
      properties: {
        reproduced: { type: 'integer' },
        unreproduced: { type: 'array', items: { type: 'object', required: ['reference', 'urn', 'recorded', 'replayed', 'reason'], properties: { reference: str, urn: str, recorded: str, replayed: str, reason: str } } }
      }
    },
    changes: { type: 'object', required: ['approvedToDeclined', 'declinedToApproved'], properties: { approvedToDeclined: totals, declinedToApproved: totals } },
    rules: {
      type: 'array',
      items: { type: 'object', required: ['id', 'in', 'hits', 'approvedToDeclined', 'declinedToApproved'], properties: { id: str, in: { type: 'string', enum: ['baseline', 'candidate', 'both'] }, hits: { type: 'integer' }, approvedToDeclined: withSamples, declinedToApproved: withSamples } }
    },
    changed: { type: 'array', items: { type: 'object', required: ['reference', 'urn', 'from', 'to'], properties: { reference: str, urn: str, from: str, to: str, baselineRule: strOrNull, candidateRule: strOrNull } } },
    warnings: { type: 'array', items: { type: 'object', required: ['message'], properties: { message: str } } }
  }
}
const validReport = strictAjv.compile<Omit<BacktestReport, 'warnings'> & { warnings?: Warning[] }>(reportSchema)

/** The report in `text`, or why it is not one. */
export function reportOf (text: string): { ok: true, report: BacktestReport } | { ok: false, error: string } {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (err) {
    return { ok: false, error: `This is not JSON (${(err as Error).message}).` }
  }
  if (!validReport(doc)) {
    const e = validReport.errors?.[0]
    return { ok: false, error: `This is not a backtest report (extauth rules backtest --json): ${e !== undefined ? `${e.instancePath || 'the document'} ${e.message ?? 'is not valid'}` : 'unexpected shape'}.` }
  }
  return { ok: true, report: { ...doc, warnings: doc.warnings ?? [] } }
}

function Form ({ viewer, pasted }: { viewer: Viewer, pasted: string }): VNode {
  return (
    <form class='action stack' method='post' action={`${BASE}/backtest`} enctype='multipart/form-data' aria-label='Show a backtest report'>
      <Csrf viewer={viewer} />
      <label for='bt-file'>Upload the report file
        <input id='bt-file' name='file' type='file' accept='application/json,.json' />
      </label>
      <label for='bt-json'>or paste its JSON
        <textarea id='bt-json' name='json' spellcheck={false}>{pasted}</textarea>
      </label>
      <button type='submit'>Show</button>
    </form>
  )
}

function Report ({ r, currency }: { r: BacktestReport, currency: string }): VNode {
  const money = (v: number): string => moneyWords(v, currency)
  const a = r.changes.approvedToDeclined
  const d = r.changes.declinedToApproved
  return (
    <div>
      <h2>Report {r.from} .. {r.to}</h2>
      <Facts rows={[
        ['Decisions replayed', minor(r.decisions)],
        ['Baseline reproduced', `${minor(r.baseline.reproduced)} reproduced, ${minor(r.baseline.unreproduced.length)} not reproduced`],
        ['Approved → declined', `${minor(a.count)} (amount ${money(a.amount)})`],
        ['Declined → approved', `${minor(d.count)} (amount ${money(d.amount)})`]
      ]} />
      {r.warnings.map((w, i) => <p key={i} class='flash error'>Warning: {w.message}</p>)}
      <h3>Per rule</h3>
      <table>
        <thead><tr><th scope='col'>Rule</th><th scope='col'>In</th><th scope='col' class='num'>Hits</th><th scope='col' class='num'>Appr → decl</th><th scope='col' class='num'>Amount</th><th scope='col' class='num'>Decl → appr</th><th scope='col' class='num'>Amount</th><th scope='col'>Samples</th></tr></thead>
        <tbody>
          {r.rules.map((x) => (
            <tr key={`${x.id}/${x.in}`}>
              <th scope='row'>{x.id}</th><td>{x.in}</td><td class='num'>{minor(x.hits)}</td>
              <td class='num'>{minor(x.approvedToDeclined.count)}</td><td class='num'>{money(x.approvedToDeclined.amount)}</td>
              <td class='num'>{minor(x.declinedToApproved.count)}</td><td class='num'>{money(x.declinedToApproved.amount)}</td>
              <td>{[...x.approvedToDeclined.samples, ...x.declinedToApproved.samples].join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Changed decisions</h3>
      {r.changed.length === 0
        ? <p>None.</p>
        : (
          <table>
            <thead><tr><th scope='col'>Reference</th><th scope='col'>Customer</th><th scope='col'>From</th><th scope='col'>To</th><th scope='col'>Baseline rule</th><th scope='col'>Candidate rule</th></tr></thead>
            <tbody>{r.changed.slice(0, 500).map((c) => (
              <tr key={`${c.urn}/${c.reference}`}><td><a href={decisionHref(c.urn, c.reference)}>{c.reference}</a></td><td>{c.urn}</td><td>{c.from}</td><td>{c.to}</td><td>{c.baselineRule ?? '-'}</td><td>{c.candidateRule ?? '-'}</td></tr>
            ))}
            </tbody>
          </table>
          )}
      {r.changed.length > 500 && <p class='muted'>The first 500 of {minor(r.changed.length)} are listed.</p>}
      <h3>Not reproduced by the baseline replay</h3>
      {r.baseline.unreproduced.length === 0
        ? <p>None: the baseline replay gave every recorded answer again.</p>
        : (
          <table>
            <thead><tr><th scope='col'>Reference</th><th scope='col'>Customer</th><th scope='col'>Recorded</th><th scope='col'>Replayed</th><th scope='col'>Why</th></tr></thead>
            <tbody>{r.baseline.unreproduced.slice(0, 500).map((u) => <tr key={`${u.urn}/${u.reference}`}><td>{u.reference}</td><td>{u.urn}</td><td>{u.recorded}</td><td>{u.replayed}</td><td>{u.reason}</td></tr>)}</tbody>
          </table>
          )}
      <h3>As the command prints it</h3>
      <pre>{formatReport(r, { baselineLabel: 'as recorded in the report', candidateLabel: 'as in the report', currency }).join('\n')}</pre>
    </div>
  )
}

export async function backtestPages (app: FastifyInstance, opts: ConsoleOptions): Promise<void> {
  app.get('/backtest', { config: { scope: 'read' } }, async (request, reply) => {
    const viewer = viewerOf(request)
    return sendHtml(reply, page({ title: 'Backtest report', section: 'backtest', viewer }, (
      <div>
        <h1>Backtest report</h1>
        <p class='muted'>Show the JSON of <code>extauth rules backtest --json</code> as tables: what a candidate rule set would change (amounts in DEFAULT_CURRENCY {opts.defaultCurrency}, as the command prints them). Nothing is stored.</p>
        <Form viewer={viewer} pasted='' />
      </div>
    )))
  })

  app.post('/backtest', { config: { scope: 'read' }, bodyLimit: REPORT_BYTES_MAX }, async (request, reply) => {
    const viewer = viewerOf(request)
    const body = (request.body ?? {}) as Record<string, unknown>
    const file = body.file
    const pasted = typeof body.json === 'string' ? body.json : ''
    const json = Buffer.isBuffer(file) && file.length > 0 ? file.toString('utf8') : pasted
    const r = json.trim() === '' ? { ok: false as const, error: 'Upload a report file or paste its JSON.' } : reportOf(json)
    return sendHtml(reply, page({ title: 'Backtest report', section: 'backtest', viewer, flash: r.ok ? null : { kind: 'error', text: r.error } }, (
      <div>
        <h1>Backtest report</h1>
        {r.ok && <Report r={r.report} currency={opts.defaultCurrency} />}
        <h2>Another report</h2>
        <Form viewer={viewer} pasted={r.ok ? '' : pasted.slice(0, 100_000)} />
      </div>
    )), r.ok ? 200 : 400)
  })
}
