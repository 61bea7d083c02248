// `npm run sim` as an operator runs it: three simulators on 127.0.0.1, stopped by SIGTERM.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import t from 'tap'
import { GATEWAY_PATHS } from './fixtures/spec.js'
import { get, post } from './fixtures/http.js'

t.test('starts the three simulators and stops on SIGTERM', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sim/main.ts'], {
    cwd: new URL('../../', import.meta.url),
    env: { ...process.env, SIM_GATEWAY_PORT: '0', SIM_RISK_PORT: '0', SIM_PREPAID_PORT: '0', SIM_GATEWAY_OTP: '135790', GATEWAY_API_KEY: 'main-test-key' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const urls: Record<string, string> = {}
  const logged: string[] = []
  for await (const line of createInterface({ input: child.stdout })) {
    logged.push(line)
    const entry = JSON.parse(line) as { sim?: string, url?: string, msg?: string }
    if (entry.url !== undefined && entry.sim !== undefined && entry.msg?.includes('ready') === true) urls[entry.sim] = entry.url
    if (Object.keys(urls).length === 3) break
  }
  t.same(Object.keys(urls).sort(), ['gateway', 'prepaid', 'risk'])
  for (const u of Object.values(urls)) t.match(u, /^http:\/\/127\.0\.0\.1:\d+$/)

  const header = { version: '1.0.0.1', pgInstanceId: '9001', 'x-api-key': 'main-test-key' }
  const body = { merchantId: 'SIMMERCHANT01', pan: '4111111111111111', expDate: '122030', cvd2: '123', amount: '100', currencCode: '356', merchantReferenceNo: 'MAIN-1' }
  t.match((await post(urls.gateway + GATEWAY_PATHS.generateOtp, { header, body })).body, { status: 'success' }, 'credentials from GATEWAY_API_KEY')
  t.same((await get(`${urls.gateway}/__sim/otp/MAIN-1`)).body, { otp: '135790' })
  t.match((await get(`${urls.prepaid}/__sim/customers/90000000001`)).body, { balance: 1_000_000 }, 'demo wallets seeded')

  child.kill('SIGTERM')
  const [code] = await once(child, 'exit')
  t.equal(code, 0)
  t.notOk(logged.join('\n').includes('main-test-key'))
})
