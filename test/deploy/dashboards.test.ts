// The Grafana dashboard and the Prometheus alerts under deploy/ read only metrics the service exposes (or the
// few named in the docs as coming with the controls and events features), so a renamed metric cannot leave a
// blank panel or an alert that never fires. promtool tests the alerts' behaviour (npm run check:alerts).
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { createMetrics, watchHealth } from '../../src/metrics.js'
import { standInMetrics } from '../../src/standin/metrics.js'
import { settlementMetrics } from '../../src/settlement/metrics.js'

const root = new URL('../../', import.meta.url)
/** Exposed by the card-controls and decision-events features. */
const FROM_OTHER_FEATURES = ['extauth_control_declines_total', 'extauth_events_oldest_undelivered_seconds', 'extauth_events_parked_total']

async function exposed (): Promise<Set<string>> {
  const m = createMetrics()
  watchHealth(m, { redisUp: () => true, ready: () => true })
  standInMetrics(m.registry)
  // the settlement's, on the same registry (the services add them)
  settlementMetrics(m.registry, () => null)
  const names = new Set<string>(FROM_OTHER_FEATURES)
  for (const line of (await m.registry.metrics()).split('\n')) {
    const match = /^# TYPE (\S+) (\S+)/.exec(line)
    if (match === null) continue
    const [, name, type] = match as unknown as [string, string, string]
    names.add(name)
    if (type === 'histogram' || type === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s)
  }
  return names
}

function metricsIn (expr: string): string[] {
  return [...new Set(expr.match(/\bextauth_[a-z0-9_]+/g) ?? [])]
}

interface Panel { type: string, title: string, id: number, targets?: Array<{ expr: string, datasource?: unknown }> }

t.test('every dashboard query reads exposed metrics', async t => {
  const known = await exposed()
  const dash = JSON.parse(await readFile(fileURLToPath(new URL('deploy/grafana/extauth-dashboard.json', root)), 'utf8')) as { panels: Panel[], uid: string }
  const ids = dash.panels.map(p => p.id)
  t.equal(new Set(ids).size, ids.length, 'panel ids are unique')
  const exprs = dash.panels.flatMap(p => (p.targets ?? []).map(q => ({ title: p.title, expr: q.expr, ds: q.datasource })))
  t.ok(exprs.length >= 20)
  for (const { title, expr, ds } of exprs) {
    const unknown = metricsIn(expr).filter(n => !known.has(n))
    t.same(unknown, [], `${title}: ${expr}`)
    t.ok(expr.includes('instance=~"$instance"'), `${title}: filtered by the instance variable`)
    // eslint-disable-next-line no-template-curly-in-string -- Grafana's variable, written as the dashboard holds it
    t.same(ds, { type: 'prometheus', uid: '${datasource}' }, `${title}: the datasource variable`)
  }
  const all = exprs.map(e => e.expr).join('\n')
  for (const needed of ['extauth_decisions_total', 'extauth_decision_duration_seconds_bucket', 'extauth_decision_deadline_seconds',
    'extauth_deadline_hits_total', 'extauth_shed_total', 'extauth_store_errors_total', 'extauth_rule_hits_total',
    'extauth_adapter_calls_total', 'extauth_compensations_pending', ...FROM_OTHER_FEATURES]) {
    t.ok(all.includes(needed), `a panel shows ${needed}`)
  }
})

t.test('every alert reads exposed metrics and has a severity and a summary', async t => {
  const known = await exposed()
  const doc = parse(await readFile(fileURLToPath(new URL('deploy/prometheus/extauth-alerts.yml', root)), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string, expr: string, labels?: { severity?: string }, annotations?: { summary?: string } }> }>
  }
  const rules = doc.groups.flatMap(g => g.rules)
  t.ok(rules.length >= 10)
  for (const r of rules) {
    t.same(metricsIn(r.expr).filter(n => !known.has(n)), [], `${r.alert}: ${r.expr}`)
    t.ok(r.labels?.severity === 'page' || r.labels?.severity === 'ticket', `${r.alert}: severity`)
    t.ok((r.annotations?.summary ?? '') !== '', `${r.alert}: summary`)
  }
  const tests = parse(await readFile(fileURLToPath(new URL('deploy/prometheus/extauth-alerts.test.yml', root)), 'utf8')) as {
    tests: Array<{ alert_rule_test: Array<{ alertname: string, exp_alerts: unknown[] }> }>
  }
  const cases = tests.tests.flatMap(x => x.alert_rule_test)
  for (const r of rules) {
    t.ok(cases.some(c => c.alertname === r.alert && c.exp_alerts.length > 0), `${r.alert}: a promtool case where it fires`)
    t.ok(cases.some(c => c.alertname === r.alert && c.exp_alerts.length === 0), `${r.alert}: a promtool case where it does not`)
  }
})
