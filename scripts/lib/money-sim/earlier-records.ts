// The start state an upgrade meets: card-lifecycle records that earlier versions left in the store in the
// middle of their calls, one or more of every earlier format (src/moves/earlier-formats.ts writes them as each
// version stored them). What each means is set down here, apart from the service's reading of it: the money
// the earlier version moved went through the model (a hold is a debit of the sender), what the parties did
// is in their books (the platform moved or refused it, its answer lost; the card charged or not), and a
// client holds the call open, to repeat it as the documentation says. The invariants then check every
// record against the money as for any call.
import { asFormat, LIFECYCLE_FORMATS } from '../../../src/moves/earlier-formats.js'
import { transferFingerprint } from '../../../src/moves/transfers.js'
import { unloadFingerprint } from '../../../src/moves/unloads.js'
import { intBetween, pick } from '../../../src/sim/prng.js'
import type { Store } from '../../../src/store/types.js'
import type { LoadJob, OpEnv, TransferJob, UnloadJob } from './clients.js'
import { customerIdOf, type PartyBooks } from './fake-parties.js'
import { walletCodeDescription, walletCodeFamily } from '../../../src/adapters/prepaid/wallet-codes.js'

/** The transfer formats that held money as money operations (1 and 2 used other store references). */
const HELD_TRANSFER_FORMATS = [3, 4, 5]
const LOAD_FORMATS = LIFECYCLE_FORMATS.load.map((f) => f.format).slice(0, -1)
const UNLOAD_FORMATS = LIFECYCLE_FORMATS.unload.map((f) => f.format).slice(0, -1)

/** Where an earlier version's held move stopped, and what the platform did with it. */
type HeldState = 'sent-moved' | 'sent-declined' | 'never-sent' | 'token-kept' | 'authorized'
const HELD_STATES: HeldState[] = ['sent-moved', 'sent-declined', 'never-sent', 'token-kept', 'authorized']
/** Where an earlier version's load stopped, and what the gateway did. */
type LoadState = 'otp-sent' | 'authorize-lost-charged' | 'authorize-lost-declined' | 'verified' | 'authorized'
const LOAD_STATES: LoadState[] = ['otp-sent', 'authorize-lost-charged', 'authorize-lost-declined', 'verified', 'authorized']

/** The account numbers and unload fields the simulation's clients send (clients.ts). */
const FROM_ACCOUNT = '100001'
const TO_ACCOUNT = '100002'
function unloadRequest (job: UnloadJob): Parameters<typeof unloadFingerprint>[0] {
  return {
    clientTxnId: job.id, urn: job.urn, customerId: customerIdOf(job.urn), accountNumber: FROM_ACCOUNT, amount: job.amount, fee: job.fee,
    receiver: 'A B', sourceType: 0, fundFlowType: 'WALLET_TO_BANK', implId: 'IMPL1', implType: 'BANK', beneficiaryId: 7
  }
}

/** The platform's books for a send an earlier version made: the money moved or refused, an answer token sealed. */
function platformActed (books: PartyBooks, kind: 'transfer' | 'unload', id: string, moved: boolean, what: { fromUrn: string, toUrn: string, amount: number, total: number }): string {
  books.clientTxnIds.set(id, kind)
  if (kind === 'transfer') books.transfers.set(id, { fromUrn: what.fromUrn, toUrn: what.toUrn, amount: what.amount, outcome: moved ? 'moved' : 'declined' })
  else books.unloads.set(id, { urn: what.fromUrn, total: what.total, outcome: moved ? 'moved' : 'declined' })
  const token = `T${books.nextId()}`
  books.tokens.set(token, moved
    ? { kind: 'ok', ledgerTransactionId: `L${books.nextId()}`, amount: what.amount, legs: kind === 'transfer' ? { from: what.fromUrn, to: what.toUrn } : null }
    : { kind: 'declined', code: '6919', description: walletCodeDescription('6919'), family: walletCodeFamily('6919'), retryable: false, clientTxnId: id })
  return token
}

/** A record to put in the store as an earlier version left it. */
export interface EarlierRecord { kind: 'load' | 'transfer' | 'unload', id: string, value: Record<string, unknown> }

/**
 * Takes the earlier versions' holds and opens the records' clients; returns the records, for the caller to
 * write into the store itself (`writeEarlierRecords`). Runs in the opening state, without faults, through the
 * process's store, so the model applies each hold.
 */
export async function seedEarlierRecords (env: OpEnv): Promise<EarlierRecord[]> {
  const { sim, world, books } = env
  const rnd = sim.rnd
  const now = sim.clock.now()
  const store = env.proc().store
  const records: EarlierRecord[] = []
  const put = async (kind: EarlierRecord['kind'], id: string, value: Record<string, unknown>): Promise<void> => {
    records.push({ kind, id, value })
  }
  const funded = world.customers.filter((c) => c.opening >= 1_000)
  if (funded.length === 0) return records

  for (const kind of ['transfer', 'unload'] as const) {
    const formats = kind === 'transfer' ? HELD_TRANSFER_FORMATS : UNLOAD_FORMATS
    for (const format of formats) {
      for (const state of HELD_STATES) {
        const from = pick(rnd, funded)
        const model = sim.model.customers.get(from.urn)
        const amount = intBetween(rnd, 1, Math.min(900, Math.floor((model?.available ?? 0) / 2)))
        if (amount < 1) continue
        const fee = kind === 'unload' && rnd() < 0.5 ? intBetween(rnd, 1, 50) : 0
        // the earlier version held amount and fee: a customer these records already drew down may not have both
        if (amount + fee > (model?.available ?? 0)) continue
        const to = world.customers.find((c) => c.urn !== from.urn) ?? from
        const id = `OLD:${kind}:${format}:${state}`
        const total = amount + fee
        // the earlier version took the hold before it sent
        await store.debit(from.urn, total, `${kind}:${id}:hold:1`)
        let status = 'PENDING'
        let token: string | null = null
        let ledger: string | null = null
        if (state === 'sent-moved' || state === 'sent-declined' || state === 'token-kept' || state === 'authorized') {
          const moved = state === 'sent-declined' ? false : state === 'authorized' ? true : rnd() < 0.8
          const t = platformActed(books, kind, id, moved, { fromUrn: from.urn, toUrn: to.urn, amount, total })
          if (state === 'token-kept') token = t
          if (state === 'authorized') { status = 'AUTHORIZED'; ledger = `L${books.nextId()}` }
        }
        const common = {
          clientTxnId: id, status, upstream: status === 'AUTHORIZED' ? { code: '00', description: 'SUCCESS' } : null, ledgerTransactionId: ledger,
          hold: { urn: from.urn, amount: String(total), seq: 1, state: 'held' }, responseToken: token, sends: state === 'never-sent' ? 0 : 1,
          completing: false, createdAtMs: now, updatedAtMs: now, rev: 2
        }
        if (kind === 'transfer') {
          const job: TransferJob = { kind: 'transfer', id, fromUrn: from.urn, toUrn: to.urn, amount, phase: 'send', last: null }
          const req = { clientTxnId: id, fromUrn: from.urn, toUrn: to.urn, fromAccountNumber: FROM_ACCOUNT, toAccountNumber: TO_ACCOUNT, amount }
          const today = { ...common, fromUrn: from.urn, toUrn: to.urn, amount: String(amount), fingerprint: transferFingerprint(req) }
          await put('transfer', id, asFormat('transfer', format, today, { fromAccountNumber: FROM_ACCOUNT, toAccountNumber: TO_ACCOUNT }))
          env.jobs.push(job)
          env.parked.push(job)
        } else {
          const job: UnloadJob = { kind: 'unload', id, urn: from.urn, amount, fee, phase: 'send', last: null }
          const req = unloadRequest(job)
          const today = { ...common, urn: from.urn, customerId: customerIdOf(from.urn), amount: String(amount), fee: String(fee), requestDateTimeMs: now, fingerprint: unloadFingerprint(req) }
          const { urn: _u, ...rest } = req
          await put('unload', id, asFormat('unload', format, today, { accountNumber: FROM_ACCOUNT, request: { ...rest, requestDateTime: new Date(now).toISOString() } }))
          env.jobs.push(job)
          env.parked.push(job)
        }
      }
    }
  }

  for (const format of LOAD_FORMATS) {
    for (const state of LOAD_STATES) {
      const c = pick(rnd, world.customers)
      const ref = `OLD:load:${format}:${state}`
      const amount = intBetween(rnd, 1, 8_000)
      const pgTransactionId = `PG${books.nextId()}`
      const verified = state !== 'otp-sent'
      const charged = state === 'authorize-lost-charged' || state === 'authorized'
      books.loads.set(ref, { pgTransactionId, amount, verified, charged, declined: state === 'authorize-lost-declined' })
      const status = state === 'otp-sent' ? 'OTP_SENT' : state === 'authorized' ? 'AUTHORIZED' : 'OTP_VERIFIED'
      const today = {
        merchantReferenceNo: ref, urn: c.urn, amount: String(amount), currencyCode: '356', cardLast4: '1234', status, pgTransactionId,
        upstream: { code: '00', description: state === 'authorized' ? 'status 50020' : 'success' },
        crediting: false, authorizes: state === 'otp-sent' || state === 'verified' ? 0 : 1, createdAtMs: now, updatedAtMs: now, rev: 2
      }
      await put('load', ref, asFormat('load', format, today))
      const job: LoadJob = { kind: 'load', ref, urn: c.urn, amount, phase: 'verify', wrongOtp: false, last: null }
      env.jobs.push(job)
      env.parked.push(job)
    }
  }
  return records
}

/**
 * Writes the records straight into the store, as the earlier version did. A record it kept with a lifetime
 * is written as one kept until settled: the simulation's time jumps would otherwise forget it before its
 * client comes back (a known limit the money page states).
 */
export async function writeEarlierRecords (store: Store, records: readonly EarlierRecord[]): Promise<void> {
  for (const r of records) await store.putLifecycle(r.kind, r.id, r.value, undefined, false)
}
