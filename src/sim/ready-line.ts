// The "ready" line of each simulator of `npm run sim`: what an integrator sets to point extauth at it. The
// variables it serves (URL, ids, paths) with their values; the credentials by name only (they are the values
// the simulator was given, and a log line carries no secret); for the prepaid platform, the wallets it holds,
// since a transfer or an unload names them.
import type { SimCustomer } from './prepaid-sim.js'
import type { SimEnv } from './sim-env.js'
import { SIM_UNLOAD_PATH, SPEC_PREPAID_PATHS } from './spec-values.js'

export type SimName = 'gateway' | 'risk' | 'prepaid'

export interface ReadyLine {
  /** the log line's fields */
  fields: {
    sim: SimName
    url: string
    /** extauth's variables and the values that make it talk to this simulator */
    extauthEnv: Record<string, string>
    /** extauth's variables that take the same values as the simulator's own (credentials: not printed) */
    sameAsSimulator: string[]
    /** prepaid: the first WALLETS_SHOWN_MAX wallets */
    wallets?: SimCustomer[]
  }
  msg: string
}

/** a customers file may hold many wallets: the line names this many, the rest are read with GET /__sim/customers/:urn */
export const WALLETS_SHOWN_MAX = 10

function variables (env: Record<string, string>): string {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')
}

function walletsText (all: readonly SimCustomer[], shown: readonly SimCustomer[]): string {
  if (all.length === 0) return 'no wallets'
  const listed = shown.map((c) => `${c.urn} ${c.customerId} ${c.accountNumber} ${c.balance}`).join(', ')
  const more = all.length > shown.length ? `; ${all.length - shown.length} more: GET /__sim/customers/:urn` : ''
  return `wallets (urn customerId accountNumber balance in minor units): ${listed}${more}`
}

export function readyLine (sim: SimName, cfg: SimEnv, url: string): ReadyLine {
  if (sim === 'gateway') {
    const extauthEnv = { GATEWAY_URL: url, GATEWAY_PG_INSTANCE_ID: cfg.gateway.pgInstanceId, GATEWAY_MERCHANT_ID: cfg.gateway.merchantId }
    return {
      fields: { sim, url, extauthEnv, sameAsSimulator: ['GATEWAY_API_KEY'] },
      msg: `gateway simulator ready: ${variables(extauthEnv)}, with GATEWAY_API_KEY as given to the simulator and any GATEWAY_VERSION (e.g. 1.0.0.1)`
    }
  }
  if (sim === 'risk') {
    return {
      fields: { sim, url, extauthEnv: { RISK_URL: url }, sameAsSimulator: ['RISK_ACCESS_TOKEN'] },
      msg: `risk simulator ready: RISK_URL=${url}, with RISK_ACCESS_TOKEN as given to the simulator and any RISK_INSTANCE_ID and RISK_CHANNEL_ID (e.g. 1001, ECOM)`
    }
  }
  const p = cfg.prepaid
  const extauthEnv = {
    PREPAID_URL: url,
    PREPAID_CLIENT_ID: p.clientId,
    PREPAID_BANK_ID: p.bankId,
    PREPAID_TRANSFER_PATH: p.fundTransferPath ?? SPEC_PREPAID_PATHS.fundTransfer,
    PREPAID_UNLOAD_PATH: p.unloadPath ?? SIM_UNLOAD_PATH
  }
  const all = p.customers ?? []
  const wallets = all.slice(0, WALLETS_SHOWN_MAX).map((c) => ({ urn: c.urn, customerId: c.customerId, accountNumber: c.accountNumber, balance: c.balance }))
  return {
    fields: { sim, url, extauthEnv, sameAsSimulator: ['PREPAID_API_KEY', 'PREPAID_CONSUMER_KEY', 'PREPAID_SECURE_CODE'], wallets },
    msg: `prepaid simulator ready: ${variables(extauthEnv)}, with PREPAID_API_KEY, PREPAID_CONSUMER_KEY and PREPAID_SECURE_CODE as given to the simulator; ${walletsText(all, wallets)}`
  }
}
