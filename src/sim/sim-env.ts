// The simulators' settings from the environment. Credentials are read from the same variables the
// adapters use (GATEWAY_API_KEY, RISK_ACCESS_TOKEN, PREPAID_*...), with demo defaults, so one set of
// variables makes the service and the simulators agree.
import { readFileSync } from 'node:fs'
import type { GatewaySimOptions } from './gateway-sim.js'
import type { PrepaidSimOptions, SimCustomer } from './prepaid-sim.js'
import type { RiskSimOptions } from './risk-sim.js'

export interface SimEnv {
  host: string
  ports: { gateway: number, risk: number, prepaid: number }
  gateway: GatewaySimOptions
  risk: RiskSimOptions
  prepaid: PrepaidSimOptions
}

export const DEMO_CUSTOMERS: readonly SimCustomer[] = Object.freeze([
  { urn: '90000000001', customerId: 'CUST0001', accountNumber: '10000000001', balance: 1_000_000 },
  { urn: '90000000002', customerId: 'CUST0002', accountNumber: '10000000002', balance: 250_000 },
  { urn: '90000000003', customerId: 'CUST0003', accountNumber: '10000000003', balance: 0 }
])

function port (env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const v = env[name]
  if (v === undefined || v === '') return dflt
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new Error(`${name} must be a port number (0 for any free port)`)
  return Number(v)
}

function text (env: NodeJS.ProcessEnv, name: string, dflt: string): string {
  const v = env[name]
  return v === undefined || v === '' ? dflt : v
}

function customers (env: NodeJS.ProcessEnv): readonly SimCustomer[] {
  const file = env.SIM_PREPAID_CUSTOMERS_FILE
  if (file === undefined || file === '') return DEMO_CUSTOMERS
  let parsed: unknown
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    throw new Error('SIM_PREPAID_CUSTOMERS_FILE must name a readable JSON file')
  }
  if (!Array.isArray(parsed)) throw new Error('SIM_PREPAID_CUSTOMERS_FILE must hold an array of {urn, customerId, accountNumber, balance}')
  return parsed as SimCustomer[]
}

export function simEnv (env: NodeJS.ProcessEnv): SimEnv {
  const fixedOtp = env.SIM_GATEWAY_OTP
  if (fixedOtp !== undefined && fixedOtp !== '' && !/^\d{4,8}$/.test(fixedOtp)) throw new Error('SIM_GATEWAY_OTP must be 4 to 8 digits')
  const gateway: GatewaySimOptions = {
    apiKey: text(env, 'GATEWAY_API_KEY', 'sim-gateway-key'),
    pgInstanceId: text(env, 'GATEWAY_PG_INSTANCE_ID', '9001'),
    merchantId: text(env, 'GATEWAY_MERCHANT_ID', 'SIMMERCHANT01')
  }
  if (fixedOtp !== undefined && fixedOtp !== '') gateway.otpGenerator = () => fixedOtp
  const risk: RiskSimOptions = { accessToken: text(env, 'RISK_ACCESS_TOKEN', 'sim-risk-token') }
  const prepaid: PrepaidSimOptions = {
    apiKey: text(env, 'PREPAID_API_KEY', 'sim-prepaid-key'),
    consumerKey: text(env, 'PREPAID_CONSUMER_KEY', 'sim-consumer-key'),
    secureCode: text(env, 'PREPAID_SECURE_CODE', 'sim-secure-code'),
    clientId: text(env, 'PREPAID_CLIENT_ID', 'SIMCLIENT'),
    bankId: text(env, 'PREPAID_BANK_ID', '1234'),
    customers: customers(env)
  }
  if (env.SIM_PREPAID_KEY !== undefined && env.SIM_PREPAID_KEY !== '') prepaid.key = env.SIM_PREPAID_KEY
  if (env.PREPAID_TRANSFER_PATH !== undefined && env.PREPAID_TRANSFER_PATH !== '') prepaid.fundTransferPath = env.PREPAID_TRANSFER_PATH
  if (env.PREPAID_UNLOAD_PATH !== undefined && env.PREPAID_UNLOAD_PATH !== '') prepaid.unloadPath = env.PREPAID_UNLOAD_PATH
  const extauthUrl = env.SIM_EXTAUTH_URL
  if (extauthUrl !== undefined && extauthUrl !== '') {
    // the platform sends its card authorizations with the headers extauth expects: the same variables
    if (!URL.canParse(extauthUrl)) throw new Error('SIM_EXTAUTH_URL must be a URL (extauth\'s public listener)')
    const keys = ['EXTAUTH_CONSUMER_KEY', 'EXTAUTH_CLIENT_ID', 'EXTAUTH_BANK_ID'] as const
    for (const k of keys) if (env[k] === undefined || env[k] === '') throw new Error(`SIM_EXTAUTH_URL needs ${k}, as extauth is given it`)
    prepaid.extauth = { url: extauthUrl, consumerKey: env.EXTAUTH_CONSUMER_KEY as string, clientId: env.EXTAUTH_CLIENT_ID as string, bankId: env.EXTAUTH_BANK_ID as string }
  }
  return {
    host: '127.0.0.1',
    ports: {
      gateway: port(env, 'SIM_GATEWAY_PORT', 9101),
      risk: port(env, 'SIM_RISK_PORT', 9102),
      prepaid: port(env, 'SIM_PREPAID_PORT', 9103)
    },
    gateway,
    risk,
    prepaid
  }
}
