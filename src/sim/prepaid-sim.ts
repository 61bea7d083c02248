// A prepaid wallet platform simulator (spec C): Encrypt and Decrypt seal and open JSON with AES-256-GCM
// under a key from the options; fundTransfer and Unload check their headers, open the request token, run
// the call on the seeded wallets and answer with a token. Refusals made before a token can be read
// (missing headers, bad key) are plaintext {responseCode, responseMessage}, as a caller would see them.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AuthRequest } from '../domain/request.js'
import type { Clock } from './clock.js'
import { registerControlRoutes } from './control-routes.js'
import { FaultBook } from './faults.js'
import type { Fault } from './faults.js'
import { createIssuer } from './issuer.js'
import type { Issuer, IssuerOptions } from './issuer.js'
import { PlatformJournal } from './platform-book.js'
import { PurchaseBook, PurchaseBookError } from './purchase-book.js'
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
  /** where the platform sends its card authorizations (POST /__sim/authorizations); without it that route answers 503 */
  extauth?: IssuerOptions
  /** the start of every platformId of the statement; default 'PF' */
  platformIdPrefix?: string
}

export interface PrepaidSim {
  app: FastifyInstance
  faults: FaultBook<PrepaidSimRoute>
  wallets: WalletBook
  /** the platform's postings, from which its statement is written */
  journal: PlatformJournal
  /** what the platform did downstream of each of extauth's answers */
  purchases: PurchaseBook
  /** the simulator's own sealing, for tests that need a token the platform would accept */
  seal (value: unknown): string
  open (token: string): unknown
}

export function buildPrepaidSim (opts: PrepaidSimOptions): PrepaidSim {
  const key = tokenKey(opts.key ?? randomBytes(32))
  const now = opts.now ?? Date.now
  const journal = new PlatformJournal({ now, ...(opts.platformIdPrefix !== undefined ? { prefix: opts.platformIdPrefix } : {}) })
  const wallets = new WalletBook(opts.customers, opts.refusal, journal)
  const purchases = new PurchaseBook(wallets, journal)
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

  registerBookRoutes(app, { wallets, journal, purchases, now, ...(opts.extauth !== undefined ? { extauth: opts.extauth } : {}) })

  return {
    app,
    faults,
    wallets,
    journal,
    purchases,
    seal: (value) => seal(key, value),
    open: (token) => open(key, token)
  }
}

/**
 * The platform's books over HTTP: card authorizations sent to extauth and what the platform did with each
 * answer, force posts and fees, the balances and the statement of a period (docs/integrations/simulators.md).
 */
function registerBookRoutes (app: FastifyInstance, b: { wallets: WalletBook, journal: PlatformJournal, purchases: PurchaseBook, now: Clock, extauth?: IssuerOptions }): void {
  let issuer: Issuer | undefined
  app.addHook('onClose', async () => { await issuer?.close() })
  const amountOf = (v: unknown): number | undefined | null => v === undefined ? undefined : (typeof v === 'string' && /^\d{1,15}$/.test(v) && Number(v) > 0) ? Number(v) : null
  const textOf = (v: unknown): string | null => typeof v === 'string' && v !== '' && v.length <= 50 ? v : null

  app.post('/__sim/authorizations', async (request, reply) => {
    if (b.extauth === undefined) return await reply.code(503).send({ error: 'no extauth to send to: start the simulators with SIM_EXTAUTH_URL' })
    const body = request.body
    if (!isObject(body) || textOf(body.urn) === null || textOf(body.transactionReferenceNumber) === null || textOf(body.last4Digits) === null || amountOf(body.transactionAmount) == null) {
      return await reply.code(400).send({ error: 'send an External Authorization body (urn, last4Digits, transactionAmount, transactionReferenceNumber, ...)' })
    }
    issuer ??= createIssuer({ ...b.extauth, connections: 4 })
    const auth = body as unknown as AuthRequest
    const outcome = await issuer.send(auth)
    return { answer: outcome.kind === 'answer' ? outcome.body : null, booked: b.purchases.record(auth, outcome) }
  })

  app.post<{ Params: { reference: string, action: string } }>('/__sim/authorizations/:reference/:action', async (request, reply) => {
    const body = isObject(request.body) ? request.body : {}
    const urn = textOf(body.urn)
    const amount = amountOf(body.amount)
    if (urn === null || amount === null) return await reply.code(400).send({ error: 'need urn, and amount (a digit string of minor units) where it applies' })
    const { reference, action } = request.params
    try {
      if (action === 'clear') return { posting: b.purchases.clear(urn, reference, amount) }
      if (action === 'cancel') return { posting: b.purchases.cancel(urn, reference) }
      if (action === 'refund' && amount !== undefined) return { posting: b.purchases.refund(urn, reference, amount) }
      if (action === 'never-complete') { b.purchases.neverComplete(urn, reference); return { booked: b.purchases.get(urn, reference) } }
    } catch (err) {
      if (err instanceof PurchaseBookError) return await reply.code(409).send({ error: err.message })
      throw err
    }
    return await reply.code(400).send({ error: 'action is clear {amount?}, cancel, refund {amount} or never-complete' })
  })

  app.post('/__sim/postings', async (request, reply) => {
    const body = isObject(request.body) ? request.body : {}
    const urn = textOf(body.urn)
    const reference = textOf(body.reference)
    const amount = amountOf(body.amount)
    const last4 = body.last4 === undefined ? undefined : typeof body.last4 === 'string' && /^\d{4}$/.test(body.last4) ? body.last4 : null
    if (urn === null || reference === null || amount == null || last4 === null || (body.type !== 'purchase' && body.type !== 'fee')) {
      return await reply.code(400).send({ error: 'need type (purchase: a force post, or fee), urn, reference, amount (digit string) and last4 (a purchase)' })
    }
    if (b.wallets.customer(urn) === undefined) return await reply.code(404).send({ error: 'unknown urn' })
    try {
      if (body.type === 'fee') return { posting: b.purchases.fee(urn, reference, amount, last4) }
      if (last4 === undefined) return await reply.code(400).send({ error: 'a force post names its card: last4' })
      return { posting: b.purchases.forcePost(urn, last4, reference, amount) }
    } catch (err) {
      if (err instanceof PurchaseBookError) return await reply.code(409).send({ error: err.message })
      throw err
    }
  })

  app.get('/__sim/books', async () => ({
    customers: b.wallets.customers().map((c) => ({ urn: c.urn, balance: String(c.balance), held: String(b.purchases.held(c.urn)) })),
    authorizations: b.purchases.all()
  }))

  app.get<{ Querystring: { id?: string, from?: string, to?: string, complete?: string } }>('/__sim/statement', async (request, reply) => {
    const q = request.query
    const fromMs = q.from === undefined ? 0 : Date.parse(q.from)
    const toMs = q.to === undefined ? b.now() + 1 : Date.parse(q.to)
    if (Number.isNaN(fromMs) || Number.isNaN(toMs) || toMs < fromMs) return await reply.code(400).send({ error: 'from and to are ISO 8601 times, from before to' })
    const id = q.id ?? `D-${new Date(fromMs).toISOString().slice(0, 10).replaceAll('-', '')}`
    try {
      const text = b.journal.statement({ id, fromMs, toMs, complete: q.complete !== 'false' })
      return await reply.type('application/x-ndjson').send(text)
    } catch (err) {
      return await reply.code(400).send({ error: (err as Error).message })
    }
  })
}
