// The operation table: one entry per kind, with its weight and what it does. A new money path (a wallet
// unload, a card control) enters the simulation as one more entry here, plus its rules in the model.
import type { AuthRequest } from '../../../src/domain/request.js'
import type { CardStatus, CustomerStatus } from '../../../src/store/types.js'
import { intBetween, pick } from '../../../src/sim/prng.js'
import type { ControlEntries, ControlEntry } from '../../../src/domain/controls.js'
import { adminCall, platformSend, runJob, runLoad, runTransfer, runUnload, type LoadJob, type OpEnv, type RecentAuth, type TransferJob, type UnloadJob } from './clients.js'
import type { ModelAuth } from './model.js'
import { enabled, type OpKind } from './options.js'
import { CHANNELS, newReference, pickCustomer, pickLast4 } from './world.js'

export interface OpSpec {
  kind: OpKind
  weight: number
  /** needs a store whose clock the simulation drives */
  memoryOnly?: boolean
  run: (env: OpEnv) => Promise<void>
}

const RECENT_MAX = 300
const JOB_TRIES = 6

function authOf (body: AuthRequest, nowMs: number): ModelAuth {
  return {
    urn: body.urn,
    reference: body.transactionReferenceNumber,
    last4: body.last4Digits,
    debit: Number(body.transactionAmount),
    channel: body.channel,
    mcc: body.mcc ?? '',
    nowMs
  }
}

/** A new authorization; `card`: on that customer's card (an outage's busy card) */
function newAuth (env: OpEnv, card?: { urn: string, last4: string }): RecentAuth {
  const { sim, world } = env
  const rnd = sim.rnd
  const n = env.seq()
  let urn: string
  let reference: string
  let last4: string
  const pair = card === undefined && world.pairs.length > 0 && rnd() < 0.2 ? pick(rnd, world.pairs) : null
  if (card !== undefined) {
    urn = card.urn
    reference = newReference(rnd, n)
    last4 = card.last4
  } else if (pair !== null) {
    // the same base reference on both customers of a pair: their keys must stay apart
    const onShort = rnd() < 0.5
    urn = onShort ? pair.short : pair.long
    const base = `P${Math.max(1, n - intBetween(rnd, 0, 3))}`
    reference = onShort ? `${pair.suffix}:${base}` : base
    last4 = '1234'
  } else if (rnd() < 0.03) {
    urn = world.unknownUrn
    reference = newReference(rnd, n)
    last4 = '1111'
  } else {
    const c = pickCustomer(rnd, world)
    urn = c.urn
    reference = newReference(rnd, n)
    last4 = pickLast4(rnd, c)
  }
  const body: AuthRequest = {
    urn,
    terminalId: 'T1',
    systemTraceAuditNumber: '162',
    cardNetwork: 'RUPAY',
    channel: pick(rnd, CHANNELS),
    transactionAmount: String(intBetween(rnd, 1, rnd() < 0.1 ? 40_000 : 4_000)),
    transactionReferenceNumber: reference,
    last4Digits: last4,
    currencyCode: '356',
    mcc: rnd() < 0.05 ? '7995' : '5411'
  }
  const r = { body, auth: authOf(body, sim.clock.now()) }
  env.recent.push(r)
  if (env.recent.length > RECENT_MAX) env.recent.shift()
  return r
}

/** the same request on another card of the customer (or, a customer without cards, another last4) */
function onOtherCard (body: AuthRequest): AuthRequest {
  return { ...body, last4Digits: body.last4Digits === '1111' ? '2222' : '1111' }
}

function recentAuth (env: OpEnv): RecentAuth | null {
  return env.recent.length === 0 ? null : pick(env.sim.rnd, env.recent)
}

async function send (env: OpEnv, r: RecentAuth): Promise<void> {
  await platformSend(env, r.body, r.auth)
}

export const OPS: OpSpec[] = [
  { kind: 'auth', weight: 30, run: async (env) => { await send(env, newAuth(env)) } },
  {
    kind: 'auth-repeat',
    weight: 8,
    run: async (env) => {
      const r = recentAuth(env)
      if (r !== null) await send(env, r)
    }
  },
  {
    kind: 'auth-concurrent',
    weight: 6,
    run: async (env) => {
      const r = env.sim.rnd() < 0.7 ? newAuth(env) : recentAuth(env)
      if (r === null) return
      const n = intBetween(env.sim.rnd, 2, 3)
      await Promise.all(Array.from({ length: n }, async () => { await send(env, r) }))
    }
  },
  {
    kind: 'auth-conflict',
    weight: 2,
    run: async (env) => {
      const r = recentAuth(env)
      if (r === null) return
      // another amount, or the same reference on another card: a conflict while its decision is kept, a new
      // decision once it is forgotten (whose hold must not be taken for the old one's)
      const body = env.sim.rnd() < 0.5 ? { ...r.body, transactionAmount: String(Number(r.body.transactionAmount) + 1) } : onOtherCard(r.body)
      await platformSend(env, body, authOf(body, env.sim.clock.now()))
    }
  },
  {
    kind: 'reverse',
    weight: 8,
    run: async (env) => {
      const r = recentAuth(env)
      if (r === null) return
      const rnd = env.sim.rnd
      const amount = rnd() < 0.5 ? null : intBetween(rnd, 1, Number(r.body.transactionAmount) + 1)
      const times = rnd() < 0.2 ? 2 : 1
      for (let i = 0; i < times; i++) await adminCall(env, async (p) => await p.store.reverse(r.body.urn, r.body.transactionReferenceNumber, amount))
    }
  },
  {
    kind: 'credit',
    weight: 7,
    run: async (env) => {
      const rnd = env.sim.rnd
      const urn = rnd() < 0.03 ? env.world.unknownUrn : pickCustomer(rnd, env.world).urn
      // an old reference again: a replay, or a conflict when the amount differs
      const ref = `adm${rnd() < 0.2 ? Math.max(1, env.seq() - intBetween(rnd, 1, 20)) : env.seq()}`
      const amount = intBetween(rnd, 1, 20_000)
      await adminCall(env, async (p) => await p.store.credit(urn, amount, ref))
    }
  },
  {
    kind: 'debit',
    weight: 4,
    run: async (env) => {
      const rnd = env.sim.rnd
      const urn = pickCustomer(rnd, env.world).urn
      const ref = `adm${rnd() < 0.2 ? Math.max(1, env.seq() - intBetween(rnd, 1, 20)) : env.seq()}`
      await adminCall(env, async (p) => await p.store.debit(urn, intBetween(rnd, 1, 5_000), ref))
    }
  },
  {
    kind: 'customer-status',
    weight: 3,
    run: async (env) => {
      const rnd = env.sim.rnd
      const urn = pickCustomer(rnd, env.world).urn
      const status: CustomerStatus = rnd() < 0.8 ? 'ACTIVE' : pick(rnd, ['BLOCKED', 'CLOSED'] as const)
      await adminCall(env, async (p) => await p.store.putCustomer(urn, { status }))
    }
  },
  {
    kind: 'card-status',
    weight: 3,
    run: async (env) => {
      const rnd = env.sim.rnd
      const c = pickCustomer(rnd, env.world)
      const status: CardStatus = rnd() < 0.6 ? 'ACTIVE' : pick(rnd, ['LOST', 'STOLEN', 'BLOCKED'] as const)
      // a customer without cards takes any last four digits; giving it one would make the others unknown
      if (c.cards.length === 0) return
      const last4 = pick(rnd, c.cards)
      await adminCall(env, async (p) => await p.store.putCard(c.urn, last4, status))
    }
  },
  {
    kind: 'load',
    weight: 6,
    run: async (env) => {
      const rnd = env.sim.rnd
      const job: LoadJob = {
        kind: 'load', ref: `LD:${env.seq()}`, urn: pickCustomer(rnd, env.world).urn, amount: intBetween(rnd, 1, 8_000),
        phase: 'start', wrongOtp: rnd() < 0.2, last: null
      }
      env.jobs.push(job)
      await runLoad(env, job, JOB_TRIES)
      if (job.phase === 'start' || job.phase === 'verify') env.parked.push(job)
    }
  },
  {
    kind: 'transfer',
    weight: 6,
    run: async (env) => {
      const rnd = env.sim.rnd
      const from = pickCustomer(rnd, env.world).urn
      let to = pickCustomer(rnd, env.world).urn
      if (to === from) to = env.world.customers[0]?.urn === from ? (env.world.customers[1]?.urn ?? to) : (env.world.customers[0]?.urn ?? to)
      const job: TransferJob = { kind: 'transfer', id: `TR:${env.seq()}`, fromUrn: from, toUrn: to, amount: intBetween(rnd, 1, 6_000), phase: 'send', last: null }
      env.jobs.push(job)
      await runTransfer(env, job, JOB_TRIES)
      if (job.phase === 'send') env.parked.push(job)
    }
  },
  {
    kind: 'unload',
    weight: 5,
    run: async (env) => {
      const rnd = env.sim.rnd
      const urn = pickCustomer(rnd, env.world).urn
      // a clientTxnId a transfer used: the platform knows one id space for both
      const transfer = enabled(env.sim.opts, 'shared-txn-ids') && rnd() < 0.05 ? env.jobs.find((j) => j.kind === 'transfer' && rnd() < 0.1 && !env.jobs.some((u) => u.kind === 'unload' && u.id === j.id)) : undefined
      const id = transfer !== undefined && transfer.kind === 'transfer' ? transfer.id : `UL:${env.seq()}`
      const job: UnloadJob = { kind: 'unload', id, urn, amount: intBetween(rnd, 1, 6_000), fee: rnd() < 0.5 ? 0 : intBetween(rnd, 1, 50), phase: 'send', last: null }
      if (transfer !== undefined && transfer.kind === 'transfer') job.reuses = transfer
      env.jobs.push(job)
      await runUnload(env, job, JOB_TRIES)
      if (job.phase === 'send') env.parked.push(job)
    }
  },
  {
    kind: 'card-controls',
    weight: 3,
    run: async (env) => {
      const rnd = env.sim.rnd
      const c = pickCustomer(rnd, env.world)
      if (c.cards.length === 0) return
      const last4 = pick(rnd, c.cards)
      const patch: ControlEntries = {}
      for (const kind of ['POS', 'ATM', 'ECOM', 'POS-Contactless'] as const) {
        if (rnd() < 0.5) continue
        const e: ControlEntry = {}
        if (rnd() < 0.5) e.enabled = rnd() < 0.75
        if (rnd() < 0.4) e.perTransactionMax = rnd() < 0.3 ? null : intBetween(rnd, 500, 5_000)
        if (rnd() < 0.6) e.dailyMax = rnd() < 0.3 ? null : intBetween(rnd, 1_000, 15_000)
        patch[kind] = e
      }
      await adminCall(env, async (p) => await p.store.patchCardControls(c.urn, last4, patch))
      if (rnd() < 0.2) await adminCall(env, async (p) => await p.store.getCardControls(c.urn, last4))
    }
  },
  {
    kind: 'resume',
    weight: 2,
    run: async (env) => {
      const job = env.parked.shift()
      if (job === undefined) return
      await runJob(env, job, JOB_TRIES)
      if (job.phase === 'start' || job.phase === 'verify' || job.phase === 'send') env.parked.push(job)
    }
  },
  {
    kind: 'bad-amount',
    weight: 1,
    run: async (env) => {
      const rnd = env.sim.rnd
      const urn = pickCustomer(rnd, env.world).urn
      const amount = pick(rnd, [-500, 1.5, 0, Number.NaN, 2 ** 60])
      const ref = `adm${env.seq()}`
      const which = pick(rnd, ['credit', 'debit', 'reverse'] as const)
      const r = recentAuth(env)
      await adminCall(env, async (p) => {
        if (which === 'reverse' && r !== null) return await p.store.reverse(r.body.urn, r.body.transactionReferenceNumber, amount)
        return which === 'debit' ? await p.store.debit(urn, amount, ref) : await p.store.credit(urn, amount, ref)
      }, 1)
    }
  },
  {
    kind: 'store-outage',
    weight: 2,
    run: async (env) => {
      const { sim } = env
      const rnd = sim.rnd
      // the store cannot be reached: every call fails before it is sent, and decisions are made in stand-in
      sim.outage = true
      if (sim.standIn !== null) sim.standIn.figures.outages++
      env.armStandInKill(rnd() < 0.3)
      const c = pickCustomer(rnd, env.world)
      // one card that the platform keeps sending, so that the per-card caps are reached
      const busy = { urn: c.urn, last4: pickLast4(rnd, c) }
      const rounds = intBetween(rnd, 1, 3)
      for (let i = 0; i < rounds; i++) {
        const sends: Array<Promise<void>> = []
        for (let j = intBetween(rnd, 2, 6); j > 0; j--) {
          const x = rnd()
          const r = x < 0.25 ? recentAuth(env) : null
          // a repeat (of an approval of this outage, or of before it), now and then with another amount
          if (r !== null && x < 0.22) sends.push(send(env, r))
          else if (r !== null) {
            const body = { ...r.body, transactionAmount: String(Number(r.body.transactionAmount) + 1) }
            sends.push(platformSend(env, body, authOf(body, sim.clock.now())).then(() => {}))
          } else sends.push(send(env, newAuth(env, rnd() < 0.5 ? busy : undefined)))
        }
        await Promise.all(sends)
        sim.clock.advance(intBetween(rnd, 20, 500))
      }
      // the store answers again: the replay starts (a kill may come in it), as its timer would start it
      sim.outage = false
      env.armStandInKill(rnd() < 0.3)
      for (let i = 0; i < 4 && env.proc().standInBacklog > 0; i++) await env.proc().replayStandIn()
      env.armStandInKill(false)
    }
  },
  {
    kind: 'time-jump',
    weight: 0.3,
    memoryOnly: true,
    run: async (env) => {
      // past the default retention (8 days): what the store forgets, the model forgets; what it must keep, it keeps
      env.sim.clock.advance(9 * 24 * 3_600_000)
      const r = recentAuth(env)
      if (r !== null) await adminCall(env, async (p) => await p.store.reverse(r.body.urn, r.body.transactionReferenceNumber, null))
      // a reference whose decision is now forgotten, authorized anew on another card before an expiry run: the
      // new decision's hold is not the old one's, which expiry gives back
      const again = recentAuth(env)
      if (again !== null && env.sim.rnd() < 0.5) {
        const body = onOtherCard(again.body)
        await platformSend(env, body, authOf(body, env.sim.clock.now()))
      }
    }
  }
]
