// A prepaid wallet platform simulator (spec C): Encrypt and Decrypt seal and open JSON with AES-256-GCM
// under a key from the options; fundTransfer and Unload check their headers, open the request token, run
// the call on the seeded wallets and answer with a token. Refusals made before a token can be read
// (missing headers, bad key) are plaintext {responseCode, responseMessage}, as a caller would see them.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Clock } from './clock.js'
import { registerControlRoutes } from './control-routes.js'
import { FaultBook } from './faults.js'
import type { Fault } from './faults.js'
import { header, isObject, simApp } from './sim-app.js'
import type { SimAppOptions } from './sim-app.js'
import { simRoute } from './sim-route.js'
import { SIM_UNLOAD_PATH, SPEC_PREPAID_PATHS as PREPAID_PATHS, specTimestamp, walletCodeText as walletCodeDescription } from './spec-values.js'
import type { SimAnswer } from './sim-route.js'
import { open, seal, tokenKey } from './token-crypto.js'
import { WalletBook } from './wallet-book.js'
import type { SimCustomer, SimRefusal } from './wallet-book.js'

export type { SimCustomer, SimRefusal } from './wallet-book.js'

export const PREPAID_SIM_ROUTES = ['encrypt', 'decrypt', 'fundTransfer', 'unload'] as const
export type PrepaidSimRoute = typeof PREPAID_SIM_ROUTES[number]

export interface PrepaidSimOptions extends SimAppOptions {
  apiKey: string
  consumerKey: string
  secureCode: string
  clientId: string
  bankId: string
  /** AES-256 key: 32 bytes, 64 hex characters or base64; default: random per instance */
  key?: Buffer | string
  customers?: readonly SimCustomer[]
  fundTransferPath?: string
  /** the spec gives no Unload path; default SIM_UNLOAD_PATH */
  unloadPath?: string
  /** a code to answer instead of running a transfer or an unload (declines the wallets alone never give) */
  refusal?: SimRefusal
  now?: Clock
  faults?: Partial<Record<PrepaidSimRoute, Fault>>
}

export interface PrepaidSim {
  app: FastifyInstance
  faults: FaultBook<PrepaidSimRoute>
  wallets: WalletBook
  /** the simulator's own sealing, for tests that need a token the platform would accept */
  seal (value: unknown): string
  open (token: string): unknown
}

export function buildPrepaidSim (opts: PrepaidSimOptions): PrepaidSim {
  const key = tokenKey(opts.key ?? randomBytes(32))
  const now = opts.now ?? Date.now
  const wallets = new WalletBook(opts.customers, opts.refusal)
  const faults = new FaultBook(PREPAID_SIM_ROUTES, opts.faults)
  const app = simApp(opts)

  const plain = (code: string): SimAnswer => ({
    body: { responseCode: code, responseMessage: walletCodeDescription(code), responseDateTime: specTimestamp(now()) }
  })
  const keyOk = (request: FastifyRequest): boolean => header(request.headers['x-api-key']) === opts.apiKey
  const tokenOf = (request: FastifyRequest): string | undefined => {
    const body = request.body
    return isObject(body) && typeof body.token === 'string' && body.token !== '' ? body.token : undefined
  }

  simRoute(app, faults, 'encrypt', PREPAID_PATHS.encrypt, (request) => {
    if (!keyOk(request)) return plain('406')
    if (!isObject(request.body)) return plain('1055')
    return { body: { token: seal(key, request.body) } }
  })

  simRoute(app, faults, 'decrypt', PREPAID_PATHS.decrypt, (request) => {
    if (!keyOk(request)) return plain('406')
    const token = tokenOf(request)
    if (token === undefined) return plain('1055')
    const value = open(key, token)
    return value === undefined ? plain('1051') : { body: value }
  })

  /** fundTransfer and Unload: the platform's headers, then the request token, then the wallets' rules */
  function moneyCall (route: 'fundTransfer' | 'unload', path: string, run: (req: Record<string, unknown>, ctx: { clientId: string, bankId: string, responseDateTime: string }) => unknown): void {
    simRoute(app, faults, route, path, (request) => {
      const h = request.headers
      const clientId = header(h.clientid)
      const bankId = header(h.bankid)
      const consumerKey = header(h['x-consumer-custom-id'])
      const secureCode = header(h.securecode)
      if (clientId === undefined) return plain('1262')
      if (bankId === undefined) return plain('1264')
      if (consumerKey === undefined) return plain('1310')
      if (secureCode === undefined) return plain('1311')
      if (!keyOk(request) || consumerKey !== opts.consumerKey) return plain('406')
      if (secureCode !== opts.secureCode) return plain('1049')
      if (bankId !== opts.bankId) return plain('1031')
      if (clientId !== opts.clientId) return plain('1032')
      const token = tokenOf(request)
      if (token === undefined) return plain('1055')
      const req = open(key, token)
      if (!isObject(req)) return plain('1051')
      return { body: { token: seal(key, run(req, { clientId, bankId, responseDateTime: specTimestamp(now()) })) } }
    })
  }
  moneyCall('fundTransfer', opts.fundTransferPath ?? PREPAID_PATHS.fundTransfer, (req, ctx) => wallets.transfer(req, ctx))
  moneyCall('unload', opts.unloadPath ?? SIM_UNLOAD_PATH, (req, ctx) => wallets.unload(req, ctx))

  registerControlRoutes(app, faults)
  app.post('/__sim/customers', async (request, reply) => {
    const c = request.body as Partial<SimCustomer> | null
    if (typeof c?.urn !== 'string' || typeof c.customerId !== 'string' || typeof c.accountNumber !== 'string' ||
      typeof c.balance !== 'number' || !Number.isSafeInteger(c.balance) || c.balance < 0) {
      return reply.code(400).send({ error: 'need urn, customerId, accountNumber (strings) and balance (integer minor units)' })
    }
    wallets.add({ urn: c.urn, customerId: c.customerId, accountNumber: c.accountNumber, balance: c.balance })
    return reply.code(204).send()
  })
  app.get<{ Params: { urn: string } }>('/__sim/customers/:urn', async (request, reply) => {
    const c = wallets.customer(request.params.urn)
    return c === undefined ? reply.code(404).send({ error: 'unknown urn' }) : c
  })

  return {
    app,
    faults,
    wallets,
    seal: (value) => seal(key, value),
    open: (token) => open(key, token)
  }
}
