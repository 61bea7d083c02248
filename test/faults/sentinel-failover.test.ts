// The Redis primary killed (SIGKILL) under a steady rate of decisions, behind Sentinel (one primary, two
// replicas, three Sentinels), with extauth running as its own process the whole time. It follows the promoted
// replica without a restart. With REDIS_WAIT_REPLICAS=1 no approval answered 00 is lost: each one's decision
// and debit are on the new primary, and nothing answered 05 holds money. Without it, the approvals the
// failover lost are counted and printed (the figure that justifies the setting; it may be 0 by luck).
import t, { type Test } from 'tap'
import { Keys } from '../../src/store/keys.js'
import { decodeRecord } from '../../src/store/record-format.js'
import { sentinelSetup, replicasCaughtUp, promoted, type SentinelSetup } from '../helpers/sentinel.js'
import { startServer, metricValue } from '../helpers/server-process.js'
import { adminApi, countBy, debitOf, newPool, percentile, postAuth, type Sample } from '../helpers/load.js'
import { ADMIN_TOKEN, answerDueMs, authBody } from '../helpers/config.js'

const DEADLINE_MS = 1000
const OPENING = 10_000_000
const AMOUNT = 100
const RATE_PER_S = 100
const PREFIX = 'fo:'
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

interface Run {
  setup: SentinelSetup
  samples: Sample[]
  killAt: number
  newPrimaryPort: number
  urns: string[]
}

/** Steady load; the primary is killed after a second; the load goes on until 1 s after the first 00 past the kill. */
async function failoverUnderLoad (t: Test, waitReplicas: number): Promise<Run> {
  const setup = await sentinelSetup(t, { replicas: 2 })
  const server = await startServer(t, {
    env: {
      REDIS_SENTINELS: setup.sentinelsEnv,
      REDIS_SENTINEL_NAME: setup.name,
      REDIS_KEY_PREFIX: PREFIX,
      DECISION_DEADLINE_MS: String(DEADLINE_MS),
      LOG_LEVEL: 'warn',
      ...(waitReplicas > 0 ? { REDIS_WAIT_REPLICAS: String(waitReplicas) } : {})
    }
  })
  t.teardown(async () => { await server.stop() })
  const admin = adminApi(server.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: 8 }, (_, i) => `UFAIL${i}`)
  for (const u of urns) await admin.fund(u, OPENING)
  // the opening balances are on every replica before anything is killed
  await replicasCaughtUp(setup)
  const pool = newPool(server.publicUrl, 64)
  t.teardown(async () => { await pool.close() })

  const pending: Array<Promise<Sample>> = []
  let killAt = Infinity
  let firstOkAfterKill = Infinity
  const t0 = performance.now()
  let sent = 0
  let newPrimaryPort = 0
  const killer = (async () => {
    await sleep(1000)
    killAt = performance.now()
    await setup.kill(setup.primary)
    newPrimaryPort = await promoted(setup, setup.primary.port, 20_000)
  })()
  killer.catch(() => {})
  // a fixed rate, whatever the answers do; bounded: it stops 1 s after the first 00 past the kill, or at 30 s
  while (performance.now() - t0 < 30_000 && !(performance.now() > firstOkAfterKill + 1000)) {
    const due = Math.floor((performance.now() - t0) * RATE_PER_S / 1000)
    for (; sent < due; sent++) {
      const p = postAuth(pool, authBody({ urn: urns[sent % urns.length], transactionAmount: String(AMOUNT) }), { timeoutMs: 2000 })
      p.then((s) => { if (s.code === '00' && s.sentAt > killAt) firstOkAfterKill = Math.min(firstOkAfterKill, s.sentAt + s.ms) }, () => {})
      pending.push(p)
    }
    await sleep(5)
  }
  const samples = await Promise.all(pending)
  await killer
  t.ok(firstOkAfterKill < Infinity, 'approvals resume after the failover, without restarting extauth')
  // every deadline compensation has reached the (new) primary
  const until = performance.now() + 20_000
  while (metricValue(await admin.metrics(), 'extauth_compensations_pending') !== 0) {
    if (performance.now() > until) { t.fail('compensations still pending 20 s after the load'); break }
    await sleep(100)
  }
  return { setup, samples, killAt, newPrimaryPort, urns }
}

interface Audit {
  /** answered 00, and the new primary has no such approval holding its debit */
  lost: Sample[]
  /** answered 05 (or not answered), and the new primary holds money for it */
  heldFor05: Sample[]
  /** per urn: the balance on the new primary minus (opening − the 00s answered) */
  balanceGaps: Record<string, number>
}

/** Compares every answer with what the new primary holds, read straight from it. */
async function audit (run: Run): Promise<Audit> {
  const c = run.setup.client(run.newPrimaryPort)
  const keys = new Keys(PREFIX)
  const lost: Sample[] = []
  const heldFor05: Sample[] = []
  for (const s of run.samples) {
    const key = keys.decision(String(s.sent.urn), String(s.sent.transactionReferenceNumber))
    const raw = await c.get(key)
    const rec = raw === null ? null : decodeRecord(key, raw)
    if (s.code === '00') {
      if (rec === null || rec.code !== '00' || rec.held !== String(debitOf(s.sent))) lost.push(s)
    } else if (rec !== null && rec.held !== '0') {
      heldFor05.push(s)
    }
  }
  const balanceGaps: Record<string, number> = {}
  for (const u of run.urns) {
    const approved = run.samples.filter((s) => s.sent.urn === u && s.code === '00').reduce((sum, s) => sum + debitOf(s.sent), 0)
    const available = Number(await c.hget(keys.customer(u), 'available'))
    balanceGaps[u] = available - (OPENING - approved)
  }
  return { lost, heldFor05, balanceGaps }
}

function report (t: Test, label: string, run: Run): { meanwhile: Sample[], recoveryMs: number } {
  const { samples, killAt } = run
  const firstOk = Math.min(...samples.filter((s) => s.code === '00' && s.sentAt > killAt).map((s) => s.sentAt + s.ms))
  const meanwhile = samples.filter((s) => s.sentAt > killAt && s.sentAt + s.ms < firstOk)
  const recoveryMs = firstOk - killAt
  t.comment(`${label}: ${samples.length} requests at ${RATE_PER_S}/s, answers ${JSON.stringify(countBy(samples, (s) => s.code || (s.error ?? '?')))}; ` +
    `first 00 ${recoveryMs.toFixed(0)} ms after the kill; meanwhile ${meanwhile.length} answers ${JSON.stringify(countBy(meanwhile, (s) => s.code || (s.error ?? '?')))}, ` +
    `slowest ${Math.max(0, ...meanwhile.map((s) => s.ms)).toFixed(0)} ms, p99 ${percentile(meanwhile.map((s) => s.ms), 99).toFixed(0)} ms (deadline ${DEADLINE_MS} ms)`)
  return { meanwhile, recoveryMs }
}

t.test('with REDIS_WAIT_REPLICAS=1: no 00 lost across a failover', async (t) => {
  const run = await failoverUnderLoad(t, 1)
  const { meanwhile } = report(t, 'REDIS_WAIT_REPLICAS=1', run)
  t.same(countBy(run.samples, (s) => s.error ?? 'answered'), { answered: run.samples.length }, 'every request answered (no socket error, no client timeout)')
  t.same(countBy(run.samples, (s) => String(s.status)), { 200: run.samples.length }, 'every answer is HTTP 200')
  t.ok(meanwhile.length > 0, `requests were answered between the kill and the first 00 again (${meanwhile.length})`)
  t.same(countBy(meanwhile, (s) => s.code), { '05': meanwhile.length }, 'between the kill and the first 00 again, every answer is 05')
  const slowest = Math.max(...run.samples.map((s) => s.ms))
  t.ok(slowest <= answerDueMs(DEADLINE_MS), `no answer past the deadline: slowest ${slowest.toFixed(0)} ms`)
  const a = await audit(run)
  const approvals = run.samples.filter((s) => s.code === '00').length
  t.comment(`approvals answered 00: ${approvals}; lost on the new primary: ${a.lost.length}; answered 05 but holding money: ${a.heldFor05.length}`)
  t.equal(a.lost.length, 0, 'every 00 answered is held on the new primary')
  t.equal(a.heldFor05.length, 0, 'nothing answered 05 holds money')
  t.same(a.balanceGaps, Object.fromEntries(run.urns.map((u) => [u, 0])), 'each balance on the new primary = opening − the 00s answered')
})

t.test('without REDIS_WAIT_REPLICAS: how many 00s a failover loses', async (t) => {
  const run = await failoverUnderLoad(t, 0)
  report(t, 'no REDIS_WAIT_REPLICAS', run)
  const a = await audit(run)
  const approvals = run.samples.filter((s) => s.code === '00').length
  const missing = Object.values(a.balanceGaps).reduce((sum, g) => sum + g, 0) / AMOUNT
  t.comment(`approvals answered 00: ${approvals}; LOST by the failover: ${a.lost.length} (debits missing from the balances: ${missing}); answered 05 but holding money: ${a.heldFor05.length}`)
  t.same(countBy(run.samples, (s) => s.error ?? 'answered'), { answered: run.samples.length }, 'every request answered')
})
