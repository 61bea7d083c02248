// docs/integrations/simulators.md as a reader follows it: the simulators started with exactly the page's
// environment block, extauth configured from the same block, and the page's walk-through (a load, a transfer
// and an unload) run through extauth with the answers the page shows. Only the ports move: the simulators
// take free ones and extauth is pointed at the URLs their "ready" lines print, as the page says to.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import t from 'tap'
import { request } from 'undici'
import { build } from '../helpers/app.js'
import { PREPAID_PATHS } from '../../src/adapters/prepaid/adapter.js'
import type { ReadyLine } from '../../src/sim/ready-line.js'
import { codeBlocks, curlCalls, exportedVariables, readPage, shellLines } from './page.js'

const PAGE = 'docs/integrations/simulators.md'
const URL_VARIABLES = { gateway: 'GATEWAY_URL', risk: 'RISK_URL', prepaid: 'PREPAID_URL' } as const
const PORT_VARIABLES = { gateway: 'SIM_GATEWAY_PORT', risk: 'SIM_RISK_PORT', prepaid: 'SIM_PREPAID_PORT' } as const

const page = readPage(PAGE)
const blocks = codeBlocks(page).filter((b) => b.lang === 'sh')
const envBlock = blocks.find((b) => b.body.includes('npm run sim &'))
const walkThrough = blocks.find((b) => b.heading === 'A load, a transfer and an unload through extauth')

type Ready = ReadyLine['fields']

/** `npm run sim` with `env` and no other variable but PATH; its three ready lines. */
async function startSimulators (t: { teardown: (fn: () => unknown) => void }, env: Record<string, string>): Promise<Record<keyof typeof URL_VARIABLES, Ready>> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sim/main.ts'], {
    cwd: new URL('../../', import.meta.url),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const ready: Partial<Record<keyof typeof URL_VARIABLES, Ready>> = {}
  for await (const line of createInterface({ input: child.stdout })) {
    const entry = JSON.parse(line) as Partial<Ready> & { msg: string }
    if (entry.extauthEnv !== undefined && entry.sim !== undefined) ready[entry.sim] = entry as Ready
    if (Object.keys(ready).length === 3) break
  }
  return ready as Record<keyof typeof URL_VARIABLES, Ready>
}

t.test('the environment block on the page is complete: extauth reaches the simulators and unloads', async (t) => {
  t.ok(envBlock, 'the page has the block that starts the simulators')
  t.ok(walkThrough, 'the page has the walk-through')
  if (envBlock === undefined || walkThrough === undefined) return
  const commands = shellLines(envBlock.body).map((l) => l.words.join(' '))
  t.ok(commands.includes('npm run sim') && commands.includes('npm start'), 'the block starts the simulators and extauth')
  const env = exportedVariables(envBlock.body)

  const ready = await startSimulators(t, { ...env, SIM_GATEWAY_PORT: '0', SIM_RISK_PORT: '0', SIM_PREPAID_PORT: '0' })
  // by the page's port, the URL the simulator listening there in the test printed
  const urlOf: Record<string, string> = {}
  for (const sim of Object.keys(URL_VARIABLES) as Array<keyof typeof URL_VARIABLES>) {
    const documented = env[URL_VARIABLES[sim]]
    t.ok(documented, `the block sets ${URL_VARIABLES[sim]}`)
    t.match(page, new RegExp(`${sim} on \`127\\.0\\.0\\.1:${new URL(documented ?? 'http://x').port}\`|:${new URL(documented ?? 'http://x').port}\``),
      `${URL_VARIABLES[sim]} in the block is the port the page says ${sim} listens on`)
    t.equal(ready[sim].extauthEnv[URL_VARIABLES[sim]], ready[sim].url, `${sim}'s ready line names ${URL_VARIABLES[sim]}`)
    urlOf[new URL(documented ?? 'http://x').port] = ready[sim].url
    t.ok(PORT_VARIABLES[sim] in env === false, `the block leaves ${PORT_VARIABLES[sim]} to its default`)
  }

  const extauthEnv = { ...env, ...Object.fromEntries(Object.entries(URL_VARIABLES).map(([sim, v]) => [v, ready[sim as keyof typeof URL_VARIABLES].url])) }
  const { adminApp, deps } = await build(t, { env: extauthEnv })

  // what each ready line says extauth must be given, extauth configured from the block is given
  const { gateway, prepaid } = deps.config.adapters
  const effective: Record<string, string | undefined> = {
    GATEWAY_PG_INSTANCE_ID: gateway?.pgInstanceId,
    GATEWAY_MERCHANT_ID: gateway?.merchantId,
    PREPAID_CLIENT_ID: prepaid?.clientId,
    PREPAID_BANK_ID: prepaid?.bankId,
    PREPAID_TRANSFER_PATH: prepaid === undefined ? undefined : prepaid.fundTransferPath ?? PREPAID_PATHS.fundTransfer,
    PREPAID_UNLOAD_PATH: prepaid?.unloadPath
  }
  for (const r of Object.values(ready)) {
    for (const [name, value] of Object.entries(r.extauthEnv)) {
      if (name.endsWith('_URL')) continue
      t.equal(effective[name], value, `${r.sim} simulator: extauth's ${name} from the block is the simulator's`)
    }
    for (const name of r.sameAsSimulator) t.ok(env[name], `the block sets ${name} for both sides`)
  }
  for (const w of ready.prepaid.wallets ?? []) {
    t.match(page, `| \`${w.urn}\` | \`${w.customerId}\` | \`${w.accountNumber}\` | ${(w.balance / 100).toLocaleString('en-US', { minimumFractionDigits: 2 })} |`,
      `wallet ${w.urn} is in the page's table as the simulator holds it`)
  }

  const calls = curlCalls(walkThrough.body)
  const paths = calls.map((c) => `${c.method} ${c.url.pathname}`)
  for (const call of ['POST /v1/loads', 'POST /v1/transfers', 'POST /v1/unloads']) t.ok(paths.includes(call), `the walk-through makes ${call}`)
  for (const call of calls) {
    const what = `${call.method} ${call.url.host}${call.url.pathname}`
    let status: number
    let answer: unknown
    if (call.url.port === String(deps.config.adminPort)) {
      const res = await adminApp.inject({ method: call.method as 'GET', url: call.url.pathname, headers: call.headers, ...(call.body !== undefined ? { payload: call.body } : {}) })
      status = res.statusCode
      answer = res.json()
    } else {
      const base = urlOf[call.url.port]
      t.ok(base, `${what}: a simulator of the block`)
      const res = await request(`${base ?? ''}${call.url.pathname}`, { method: call.method as 'GET', headers: call.headers, ...(call.body !== undefined ? { body: call.body } : {}) })
      status = res.statusCode
      answer = await res.body.json()
    }
    t.equal(status, 200, `${what}: ${JSON.stringify(answer)}`)
    for (const expected of call.expected) t.hasStrict(answer, expected, `${what}: the answer the page shows`)
  }
})
