// Checks and tests the Prometheus alert rules under deploy/prometheus with promtool: `promtool check rules`
// (syntax, expressions) and `promtool test rules` (each alert fires when it should and not otherwise).
//   npm run check:alerts
// promtool comes with Debian's `prometheus` package. Without it the check is skipped with a message, except
// in CI (CI=true), where a missing promtool fails the run: the alerts are part of what CI proves.
// Exit code 0: pass or skipped; 1: a check or test failed, or promtool is missing in CI.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('../deploy/prometheus/', import.meta.url))
const promtool = process.env.PROMTOOL ?? 'promtool'

function run (args: string[]): number {
  const r = spawnSync(promtool, args, { cwd: dir, stdio: 'inherit' })
  if (r.error !== undefined) return -1
  return r.status ?? 1
}

const version = spawnSync(promtool, ['--version'], { stdio: 'ignore' })
if (version.error !== undefined) {
  const inCi = process.env.CI === 'true' || process.env.CI === '1'
  const why = "check:alerts: promtool not found (install Debian's prometheus package: apt-get install prometheus)"
  if (inCi) {
    console.error(`${why}; failing because CI is set`)
    process.exit(1)
  }
  console.log(`${why}; SKIPPED the alert-rule tests`)
  process.exit(0)
}

if (run(['check', 'rules', 'extauth-alerts.yml']) !== 0 || run(['test', 'rules', 'extauth-alerts.test.yml']) !== 0) {
  console.error('check:alerts: the alert rules failed their check or tests')
  process.exit(1)
}
console.log('check:alerts: the alert rules pass promtool check and test')
