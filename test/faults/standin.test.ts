// Stand-in with a real Redis killed under load (contract §14): two extauth processes with a stand-in policy;
// Redis is killed (SIGKILL), both go on approving within the policy's caps, one of them is killed (kill -9) in
// the middle of the outage; Redis comes back on the same data, the killed instance is started again on its
// journal; each stand-in approval reaches the books once: every balance is the opening balance less every
// approval answered 00 (stand-in included), and the store holds as many stand-in decisions as were answered.
// STANDIN_FAULT_DOWN_MS sets how long Redis stays down (default 4000) for a longer run.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { privateRedis } from '../helpers/redis.js'
import { startServer, metricSum, metricValue, type ServerProcess } from '../helpers/server-process.js'
import { adminApi, closedLoop, countBy, debitOf, newPool, type Sample } from '../helpers/load.js'
import { ADMIN_TOKEN, authBody } from '../helpers/config.js'
import { tempDir } from '../standin/helpers.js'
import { sleep, until } from '../helpers/wait.js'

const DEADLINE_MS = 1000
const PLATFORM_TIMEOUT_MS = 2000
const OPENING = 1_000_000
const DOWN_MS = Number(process.env.STANDIN_FAULT_DOWN_MS ?? 4000)
const POLICY = {
  channels: { POS: { enabled: true, perTransactionMax: '2000' }, ECOM: { enabled: false } },
  perCard: { count: 3, amount: '5000' },
  perInstance: { amount: '60000' },
  blockedMcc: ['7995']
}

t.test('Redis killed under load with stand-in on two instances, one of them killed mid-outage', async (t) => {
  const redis = await privateRedis(t, { persist: true })
  const policy = join(tempDir(t), 'standin.json')
  writeFileSync(policy, JSON.stringify(POLICY))
  // each instance's journals in folders of its own, which the restarted A finds again
  const env = (dirs: { standIn: string, compensations: string }): Record<string, string> => ({
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: 'standin:',
    DECISION_DEADLINE_MS: String(DEADLINE_MS),
    STANDIN_POLICY_FILE: policy,
    STANDIN_JOURNAL_DIR: dirs.standIn,
    COMPENSATION_JOURNAL_DIR: dirs.compensations
  })
  const dirsA = { standIn: tempDir(t), compensations: tempDir(t) }
  const a1 = await startServer(t, { env: env(dirsA) })
  const b = await startServer(t, { env: env({ standIn: tempDir(t), compensations: tempDir(t) }) })
  const admin = adminApi(b.adminUrl, ADMIN_TOKEN)
  const urns = Array.from({ length: 8 }, (_, i) => `USTAND${i}`)
  for (const u of urns) await admin.fund(u, OPENING)
  const pools = [newPool(a1.publicUrl, 8), newPool(b.publicUrl, 8)]
  t.teardown(async () => { await Promise.all(pools.map(async (p) => { await p.close() })) })

  let stopA = false
  let stopB = false
  let seq = 0
  const body = (): Record<string, unknown> => {
    const i = seq++
    return authBody({
      urn: urns[i % urns.length],
      last4Digits: ['1111', '2222'][Math.floor(i / urns.length) % 2],
      // 100 … 2500: some over the channel's perTransactionMax
      transactionAmount: String(100 + (i * 337) % 2401),
      mcc: i % 13 === 0 ? '7995' : '5411'
    })
  }
  const loop = (i: number, stop: () => boolean): Promise<Sample[]> => closedLoop(pools[i]!, { concurrency: 4, durationMs: 120_000, stop, body, post: { timeoutMs: PLATFORM_TIMEOUT_MS } })
  const loadA = loop(0, () => stopA)
  const loadB = loop(1, () => stopB)

  await sleep(1000)
  const killedAt = performance.now()
  await redis.stop()
  // stand-in approvals on both instances
  const standInApprovals = async (s: ServerProcess): Promise<number> => metricValue(await adminApi(s.adminUrl, ADMIN_TOKEN).metrics(), 'extauth_standin_decisions_total', { code: '00', reason: 'approved' }) ?? 0
  await until('stand-in approvals on both instances', async () => await standInApprovals(a1) > 0 && await standInApprovals(b) > 0, 15_000)
  await sleep(DOWN_MS / 2)
  // A dies in the middle of the outage, with approvals in its journal only
  stopA = true
  const samplesA = await loadA
  const a1Backlog = metricValue(await adminApi(a1.adminUrl, ADMIN_TOKEN).metrics(), 'extauth_standin_replay_backlog') ?? 0
  await a1.kill()
  await sleep(DOWN_MS / 2)
  const status = await admin.call('GET', '/admin/v1/standin')
  t.match(status.body, { state: 'active' }, 'B reports stand-in active')

  await redis.restart()
  const back = performance.now()
  // B replays its backlog as soon as Redis answers; the restarted A adopts the journal its killed process left
  await until('B\'s backlog replayed', async () => metricValue(await admin.metrics(), 'extauth_standin_replay_backlog') === 0, 30_000, 20)
  const bReplayedIn = performance.now() - back
  const a2 = await startServer(t, { env: env(dirsA) })
  const adminA2 = adminApi(a2.adminUrl, ADMIN_TOKEN)
  await until('the first online 00 on B', async () => (await admin.call('GET', '/admin/v1/standin')).body.state !== 'active', 15_000)
  await sleep(1000)
  stopB = true
  const samplesB = await loadB
  await until('both backlogs replayed', async () =>
    metricValue(await admin.metrics(), 'extauth_standin_replay_backlog') === 0 && metricValue(await adminA2.metrics(), 'extauth_standin_replay_backlog') === 0, 30_000)
  const replayedIn = performance.now() - back
  // and the compensations of the online requests cut off by the kill (A's by the restarted A)
  await until('compensations applied', async () =>
    metricValue(await admin.metrics(), 'extauth_compensations_pending') === 0 && metricValue(await adminA2.metrics(), 'extauth_compensations_pending') === 0, 30_000, 100)

  const samples = [...samplesA, ...samplesB]
  t.same(countBy(samples, (s) => s.error ?? 'answered'), { answered: samples.length }, 'every request answered inside the platform\'s timeout')
  t.equal(samples.filter((s) => s.status !== 200).length, 0, 'every answer HTTP 200 (no 5xx)')

  // what the store holds of every answered 00, and which were stand-in ones
  const approved = samples.filter((s) => s.code === '00')
  const standIn: Array<{ s: Sample, instance: string }> = []
  for (const s of approved) {
    const r = await admin.call('GET', `/admin/v1/customers/${String(s.sent.urn)}/decisions/${String(s.sent.transactionReferenceNumber)}`)
    t.equal(r.body.code, '00', `${String(s.sent.transactionReferenceNumber)} answered 00 is in the books as 00`)
    if (r.body.standIn === true) standIn.push({ s, instance: samplesA.includes(s) ? 'A' : 'B' })
  }
  t.ok(standIn.some((x) => x.instance === 'A') && standIn.some((x) => x.instance === 'B'), 'both instances approved in stand-in')
  t.ok(a1Backlog > 0, `A was killed with ${a1Backlog} approvals not replayed`)

  // within the policy: per instance and card, per instance
  const byCard = new Map<string, { count: number, amount: number }>()
  const byInstance = new Map<string, number>()
  for (const { s, instance } of standIn) {
    const debit = debitOf(s.sent)
    t.ok(debit <= 2000 && s.sent.mcc !== '7995', 'each within perTransactionMax and not a blocked MCC')
    const k = `${instance}:${String(s.sent.urn)}:${String(s.sent.last4Digits)}`
    const c = byCard.get(k) ?? { count: 0, amount: 0 }
    byCard.set(k, { count: c.count + 1, amount: c.amount + debit })
    byInstance.set(instance, (byInstance.get(instance) ?? 0) + debit)
  }
  t.ok([...byCard.values()].every((c) => c.count <= 3 && c.amount <= 5000), 'per instance and card: at most 3 approvals and 5000')
  t.ok([...byInstance.values()].every((a) => a <= 60000), `per instance at most 60000 (${JSON.stringify([...byInstance])})`)

  // each stand-in approval replayed once, by B or by the restarted A
  const applied = metricValue(await admin.metrics(), 'extauth_standin_replayed_total', { outcome: 'applied' })! +
    metricValue(await adminA2.metrics(), 'extauth_standin_replayed_total', { outcome: 'applied' })!
  t.equal(applied, standIn.length, `stand-in approvals answered (${standIn.length}) = stand-in debits replayed`)
  t.equal(metricSum(await admin.metrics(), 'extauth_standin_replayed_total') + metricSum(await adminA2.metrics(), 'extauth_standin_replayed_total'), applied, 'and nothing else replayed')
  for (const u of urns) {
    const mine = approved.filter((s) => s.sent.urn === u)
    t.equal(await admin.available(u), OPENING - mine.reduce((sum, s) => sum + debitOf(s.sent), 0), `${u}: opening − every approval (${mine.length}), stand-in ones included`)
  }
  t.comment(`${samples.length} requests, ${approved.length} approved, ${standIn.length} in stand-in; Redis down ${(back - killedAt).toFixed(0)} ms; ` +
    `B's backlog replayed ${bReplayedIn.toFixed(0)} ms after Redis was back, the restarted A's ${replayedIn.toFixed(0)} ms after (its start included); declines ${JSON.stringify(countBy(samples.filter((s) => s.code !== '00'), (s) => s.code))}`)
  t.equal((await a2.stop()).code, 0, 'A exits 0')
  t.equal((await b.stop()).code, 0, 'B exits 0')
})
