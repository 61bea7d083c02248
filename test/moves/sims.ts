// The three simulated parties on loopback, and extauth's environment pointing at them.
import type { FastifyInstance } from 'fastify'
import { Pool } from 'undici'
import { build } from '../helpers/app.js'
import { adminHeaders } from '../helpers/config.js'
import type { Config } from '../../src/config.js'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { buildGatewaySim, type GatewaySim, type GatewaySimOptions } from '../../src/sim/gateway-sim.js'
import { buildPrepaidSim, type PrepaidSim, type PrepaidSimOptions, type SimCustomer } from '../../src/sim/prepaid-sim.js'
import { buildRiskSim, type RiskSim, type RiskSimOptions } from '../../src/sim/risk-sim.js'

interface Teardown { teardown: (fn: () => unknown) => void }

export const GATEWAY = { apiKey: 'gw-key-SECRET-1', pgInstanceId: 'PG01', merchantId: 'M0001' }
export const PREPAID = { apiKey: 'pp-key-SECRET-2', consumerKey: 'pp-consumer-SECRET-3', secureCode: 'pp-secure-SECRET-4', clientId: 'CL01', bankId: '1234' }
export const RISK = { accessToken: 'risk-token-SECRET-5', instanceId: '1001', channelId: 'EXTAUTH' }
/** the spec gives no Unload path: both sides are told this one */
export const UNLOAD_PATH = '/test/v2/unload'

async function up (t: Teardown, app: FastifyInstance): Promise<string> {
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close() })
  return url
}

export interface Sims {
  gateway: GatewaySim
  prepaid: PrepaidSim
  risk: RiskSim
  env: Record<string, string>
}

export async function startSims (t: Teardown, opts: { gateway?: Partial<GatewaySimOptions>, customers?: SimCustomer[], risk?: Partial<RiskSimOptions>, prepaid?: Partial<PrepaidSimOptions> } = {}): Promise<Sims> {
  const gateway = buildGatewaySim({ ...GATEWAY, otpGenerator: () => '123456', ...opts.gateway })
  const prepaid = buildPrepaidSim({ ...PREPAID, customers: opts.customers ?? [], unloadPath: UNLOAD_PATH, ...opts.prepaid })
  const risk = buildRiskSim({ ...RISK, ...opts.risk })
  const [g, p, r] = await Promise.all([up(t, gateway.app), up(t, prepaid.app), up(t, risk.app)])
  return {
    gateway,
    prepaid,
    risk,
    env: {
      GATEWAY_URL: g, GATEWAY_API_KEY: GATEWAY.apiKey, GATEWAY_PG_INSTANCE_ID: GATEWAY.pgInstanceId, GATEWAY_MERCHANT_ID: GATEWAY.merchantId, GATEWAY_VERSION: '1.0.0.1',
      PREPAID_URL: p, PREPAID_API_KEY: PREPAID.apiKey, PREPAID_CONSUMER_KEY: PREPAID.consumerKey, PREPAID_SECURE_CODE: PREPAID.secureCode, PREPAID_CLIENT_ID: PREPAID.clientId, PREPAID_BANK_ID: PREPAID.bankId, PREPAID_UNLOAD_PATH: UNLOAD_PATH,
      RISK_URL: r, RISK_ACCESS_TOKEN: RISK.accessToken, RISK_INSTANCE_ID: RISK.instanceId, RISK_CHANNEL_ID: RISK.channelId, RISK_TIMEOUT_MS: '300'
    }
  }
}

export type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number, body: Record<string, unknown> }>

/** A client of an app's admin listener over real HTTP. */
export async function adminCall (t: Teardown, app: FastifyInstance): Promise<Call> {
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const pool = new Pool(url)
  t.teardown(async () => { await pool.close() })
  return async (method, path, body) => {
    const res = await pool.request({ method: method as 'GET', path, headers: adminHeaders, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    return { status: res.statusCode, body: await res.body.json() as Record<string, unknown> }
  }
}

/** short upstream limits, so a hanging simulator fails fast */
export function fastTimeouts (config: Config): void {
  if (config.adapters.risk !== undefined) config.adapters.risk.timeoutMs = 1000
  for (const party of [config.adapters.gateway, config.adapters.prepaid]) {
    if (party !== undefined) Object.assign(party, { headersTimeoutMs: 1500, bodyTimeoutMs: 1500, totalTimeoutMs: 2000 })
  }
}

/** The simulators, extauth on a memory store (or `store`) pointed at them, and a client of its admin listener. */
export async function lifecycleRig (t: Teardown, simOpts: Parameters<typeof startSims>[1] = {}, store: Store = new MemoryStore(), env: Record<string, string> = {}): Promise<{ sims: Sims, store: Store, call: Call }> {
  const sims = await startSims(t, simOpts)
  const { adminApp } = await build(t, { store, env: { ...sims.env, ...env }, configure: fastTimeouts })
  return { sims, store, call: await adminCall(t, adminApp) }
}
