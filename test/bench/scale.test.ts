// bench/scale.ts starts a Redis Cluster, extauth instances, load processes, relays and a receiver of its own:
// run small here (two shards, two instances, then the two shards with events, saturated and at half that rate)
// so that a bench that no longer runs, answers anything but 00, or leaves a process behind fails the suite.
// Its figures are not looked at: no timing.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..', '..')

interface Phase {
  shards: number
  decisions: number
  decisionsPerS: number
  statuses: Record<string, number>
  codes: Record<string, number>
  errors: number
  rounds: unknown[]
  nodeUsPerDecision: number
  redisUsPerDecision: number
  instances: Array<{ pid: number, decisions: number, nodeUsPerDecision: number }>
  shardFigures: Array<{ pid: number, share: number, redisUsPerDecision: number }>
  load: Array<{ pid: number, usPerDecision: number }>
  events?: {
    delivered: number
    relays: Array<{ nodeUsPerEvent: number }>
    relayNodeUsPerEvent: number
    backlog: Array<{ start: number, end: number }>
    atRate?: { offeredPerS: number, decisionsPerS: number, deliveredPerS: number, statuses: Record<string, number>, codes: Record<string, number>, errors: number, backlog: unknown[], backlogGrowthPerS: number }
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}

t.test('bench:scale runs one shard, two, then two with events, every decision answered 00, and leaves no process behind', async (t) => {
  const args = ['--shards', '2', '--instances', '2', '--duration', '2', '--rounds', '1', '--warmup', '1', '--urns', '100',
    // few connections, and no shedding on event-loop delay (below): a machine shared with other work must not
    // turn a planned 00 into a 05
    '--connections', '2', '--log-level', 'warn', '--events', '--json']
  let stdout: string
  try {
    ({ stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(root, 'bench/scale.ts'), ...args], { cwd: root, env: { ...process.env, SHED_EVENT_LOOP_DELAY_MS: '0' }, timeout: 280_000, maxBuffer: 16 * 1024 * 1024 }))
  } catch (err) {
    // exit 1 (answers other than 00) still prints its document; show what went wrong either way
    const e = err as { code?: number, stdout?: string, stderr?: string }
    t.fail(`bench:scale exited with ${String(e.code)}`, { stderr: e.stderr?.slice(-4000) })
    if (e.code !== 1 || e.stdout === undefined) return
    stdout = e.stdout
  }
  const out = JSON.parse(stdout) as { shards: number, instances: number, pinned: boolean, phases: Phase[], efficiency: number, withEvents?: Phase, withEventsRatio?: number, allAnswered00: boolean, pids: number[] }
  t.equal(out.allAnswered00, true)
  t.same(out.phases.map((p) => p.shards), [1, 2], 'the one-shard baseline first, then the shards asked for')
  const withEvents = out.withEvents
  if (withEvents === undefined) {
    t.fail('no phase with events')
    return
  }
  t.equal(withEvents.shards, 2, 'the events phase has the shards asked for')
  for (const p of [...out.phases, withEvents]) {
    t.ok(p.decisions > 0, `${p.shards} shard(s): decisions were made`)
    t.same(Object.keys(p.codes), ['00'], `${p.shards} shard(s): every answer 00`)
    t.same(Object.keys(p.statuses), ['200'])
    t.equal(p.errors, 0)
    t.equal(p.rounds.length, 1)
    t.equal(p.instances.length, 2)
    t.equal(p.load.length, 2)
    t.equal(p.instances.reduce((a, x) => a + x.decisions, 0), p.decisions, 'each decision counted against the instance that made it')
    t.equal(p.shardFigures.length, p.shards)
    t.ok(Math.abs(p.shardFigures.reduce((a, x) => a + x.share, 0) - 1) < 1e-9, 'the shards\' shares of the decisions add up to all of them')
    for (const x of [p.nodeUsPerDecision, p.redisUsPerDecision, ...p.instances.map((i) => i.nodeUsPerDecision), ...p.load.map((l) => l.usPerDecision)]) {
      t.ok(Number.isFinite(x) && x > 0, 'a CPU time per decision for every process')
    }
    if (p !== withEvents) t.equal(p.events, undefined, 'no events delivered before the events phase')
  }
  const e = withEvents.events
  t.ok(e !== undefined && e.delivered > 0, 'events were delivered to the receiver')
  t.equal(e?.relays.length, 1)
  t.ok(Number.isFinite(e?.relayNodeUsPerEvent) && (e?.relayNodeUsPerEvent ?? 0) > 0)
  t.equal(e?.backlog.length, 1)
  const a = e?.atRate
  t.ok(a !== undefined, 'the rounds at half the saturated throughput ran')
  t.ok(Math.abs((a?.offeredPerS ?? 0) - (out.phases[1]?.decisionsPerS ?? 0) / 2) < 1e-6, 'offered at half of the two shards\' throughput without events')
  t.ok((a?.decisionsPerS ?? 0) > 0 && (a?.deliveredPerS ?? 0) > 0)
  t.same(Object.keys(a?.codes ?? {}), ['00'], 'every answer at that rate 00')
  t.same(Object.keys(a?.statuses ?? {}), ['200'])
  t.equal(a?.errors, 0)
  t.equal(a?.backlog.length, 1)
  t.ok(Number.isFinite(a?.backlogGrowthPerS), 'the outbox\'s growth')
  t.ok(Number.isFinite(out.withEventsRatio) && (out.withEventsRatio ?? 0) > 0)
  t.ok(Number.isFinite(out.efficiency) && out.efficiency > 0)
  // (masters + instances + load processes) of two phases, the events phase's with its relay, and the receiver
  t.equal(out.pids.length, (1 + 2 + 2) + (2 + 2 + 2) + (2 + 2 + 1 + 2) + 1)
  t.same(out.pids.filter(alive), [], 'every process it started has ended')
})
