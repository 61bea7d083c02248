// npm run bench:rules — our compiled rules against json-rules-engine on the same rules and the same facts.
//
// Both engines get the non-limit rules of a set (json-rules-engine has no windows to compare against) and
// the same 1,000 pre-built fact objects, cycled. Each figure is evaluations per second over a fixed time:
// - extauth (sync): set.evaluate(facts, now) in a loop — what the decision pipeline does.
// - extauth (awaited): the same, with an await per evaluation, to show how much of the gap is just the
//   promise json-rules-engine must return.
// - json-rules-engine: await engine.run(facts) — a new almanac per run, all rules evaluated, events read.
// Before timing, both are checked to pick the same decline and shadow hits on every fact object.
// Phases are bounded (BENCH_PHASE_MS, default 1200 ms; about 10 s in all).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Engine, type NestedCondition, type TopLevelCondition } from 'json-rules-engine'
import type { AuthRequest } from '../src/domain/request.js'
import { buildFacts } from '../src/rules/facts.js'
import { compileRuleFiles, loadRuleSet } from '../src/rules/load.js'
import type { CompiledRuleSet, Facts } from '../src/rules/types.js'

const root = fileURLToPath(new URL('../', import.meta.url))
const phaseMs = Number(process.env.BENCH_PHASE_MS ?? 1200)
const NOW = Date.UTC(2026, 10, 21, 12)

interface RawRule { id: string, mode?: string, when?: Record<string, unknown>, limit?: unknown, then: { decline: string } }

/** The rules of a directory as written, read with the service's own loader (same files, same order). */
async function readSet (dir: string): Promise<RawRule[]> {
  const r = await loadRuleSet(dir, { timezone: 'Asia/Kolkata' })
  if (!r.ok) throw new Error(JSON.stringify(r.errors))
  return r.set.rules.map(x => { const { file: _, ...rule } = x as RawRule & { file: string }; return rule })
}

const JRE_OP: Record<string, string> = {
  eq: 'equal', ne: 'notEqual', in: 'in', notIn: 'notIn', gt: 'greaterThan', gte: 'greaterThanInclusive', lt: 'lessThan', lte: 'lessThanInclusive', startsWith: 'startsWith', exists: 'exists'
}

/** Our `when` as json-rules-engine conditions. */
function translate (node: Record<string, unknown>): TopLevelCondition {
  const all: NestedCondition[] = []
  for (const [key, value] of Object.entries(node)) {
    if (key === 'all' || key === 'any') {
      const items = (value as Array<Record<string, unknown>>).map(translate)
      all.push(key === 'all' ? { all: items } : { any: items })
    } else if (key === 'not') {
      all.push({ not: translate(value as Record<string, unknown>) })
    } else {
      for (const [op, operand] of Object.entries(value as Record<string, unknown>)) {
        if (op === 'between') {
          const [lo, hi] = operand as [number, number]
          all.push({ fact: key, operator: 'greaterThanInclusive', value: lo }, { fact: key, operator: 'lessThanInclusive', value: hi })
        } else {
          all.push({ fact: key, operator: JRE_OP[op] as string, value: operand })
        }
      }
    }
  }
  return { all }
}

function jreEngine (rules: RawRule[]): Engine {
  const engine = new Engine([], { allowUndefinedFacts: true })
  engine.addOperator('startsWith', (a: unknown, b: string) => typeof a === 'string' && a.startsWith(b))
  engine.addOperator('exists', (a: unknown, b: boolean) => (a !== undefined) === b)
  rules.forEach((r, index) => {
    engine.addRule({
      name: r.id,
      conditions: r.when === undefined ? { all: [] } : translate(r.when),
      event: { type: r.mode ?? 'enforce', params: { id: r.id, index } }
    })
  })
  return engine
}

interface Outcome { decline: string | null, shadow: string[] }

async function jreOutcome (engine: Engine, facts: Facts): Promise<Outcome> {
  const { events } = await engine.run(facts)
  let decline: { id: string, index: number } | null = null
  const shadow: Array<{ id: string, index: number }> = []
  for (const e of events) {
    const p = e.params as { id: string, index: number }
    if (e.type === 'shadow') shadow.push(p)
    else if (decline === null || p.index < decline.index) decline = p
  }
  return { decline: decline?.id ?? null, shadow: shadow.sort((a, b) => a.index - b.index).map(s => s.id) }
}

function oursOutcome (set: CompiledRuleSet, facts: Facts): Outcome {
  const e = set.evaluate(facts, NOW)
  return { decline: e.decline?.ruleId ?? null, shadow: e.shadowHits.map(h => h.ruleId) }
}

/** 1,000 requests of a plausible mix: mostly POS/ECOM, some ATM, gambling and quasi-cash MCCs, cross-border. */
function factSamples (): Facts[] {
  let seed = 42
  const rnd = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const mccs = ['5411', '5999', '5812', '4111', '7995', '7801', '6051', '6011', '3005', '5732']
  const channels = ['POS', 'POS', 'ECOM', 'ECOM', 'POS-Contactless', 'ATM']
  const out: Facts[] = []
  for (let i = 0; i < 1000; i++) {
    const req: AuthRequest = {
      urn: `URN${i}`, terminalId: 'T1', systemTraceAuditNumber: String(i), cardNetwork: rnd(2) === 0 ? 'RUPAY' : 'VISA',
      channel: channels[rnd(channels.length)] as string, transactionAmount: String(100 + rnd(20_000_000)),
      transactionReferenceNumber: `R${i}`, last4Digits: '1234', currencyCode: '356', mcc: mccs[rnd(mccs.length)] as string,
      merchantName: rnd(10) === 0 ? 'CASINO ROYAL' : 'SHOP'
    }
    if (rnd(5) === 0) { req.billingCurrency = '840'; req.billingAmount = String(100 + rnd(200_000)) }
    if (rnd(3) === 0) req.fee = String(rnd(500))
    out.push(buildFacts(req, { nowMs: NOW + rnd(86_400_000), timezone: 'Asia/Kolkata', risk: { available: true, ruleRating: rnd(100), stepUp: rnd(2) === 0 } }))
  }
  return out
}

/** Results are kept here so no engine's work can be optimised away as unused. */
let sink: unknown

async function rate (fn: (f: Facts) => unknown, samples: Facts[], awaited: boolean): Promise<number> {
  const warm = Date.now() + Math.min(300, phaseMs / 4)
  let i = 0
  while (Date.now() < warm) { const r = fn(samples[i++ % samples.length] as Facts); if (awaited) await r }
  let n = 0
  const start = process.hrtime.bigint()
  const end = Date.now() + phaseMs
  while (Date.now() < end) {
    for (let k = 0; k < 100; k++) {
      const r = fn(samples[n++ % samples.length] as Facts)
      sink = awaited ? await r : r
    }
  }
  const secs = Number(process.hrtime.bigint() - start) / 1e9
  return n / secs
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(14)

async function benchSet (label: string, dir: string, samples: Facts[]): Promise<void> {
  const all = await readSet(dir)
  const plain = all.filter(r => r.limit === undefined)
  const total = all.length
  const compiled = compileRuleFiles([{ name: 'bench.json', text: JSON.stringify({ rules: plain }) }], { timezone: 'Asia/Kolkata' })
  if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors))
  const set = compiled.set
  const engine = jreEngine(plain)

  let agree = 0
  for (const f of samples) {
    if (JSON.stringify(oursOutcome(set, f)) === JSON.stringify(await jreOutcome(engine, f))) agree++
  }
  const declines = samples.filter(f => set.evaluate(f, NOW).decline !== null).length
  console.log(`\n${label}: ${plain.length} non-limit rules of ${total} (${dir.replace(root, '')})`)
  console.log(`  same decline and shadow hits on ${agree}/${samples.length} fact objects; ${declines} declines`)
  if (agree !== samples.length) process.exitCode = 1

  const sync = await rate(f => set.evaluate(f, NOW), samples, false)
  const awaited = await rate(async f => set.evaluate(f, NOW), samples, true)
  const jre = await rate(f => engine.run(f), samples, true)
  console.log(`  ${'engine'.padEnd(32)}${'evals/s'.padStart(14)}${'ns/eval'.padStart(10)}`)
  for (const [name, r] of [['extauth compiled (sync)', sync], ['extauth compiled (awaited)', awaited], ['json-rules-engine (awaited run)', jre]] as const) {
    console.log(`  ${name.padEnd(32)}${fmt(r)}${String(Math.round(1e9 / r)).padStart(10)}`)
  }
  console.log(`  ratio: compiled sync / json-rules-engine = ${(sync / jre).toFixed(0)}x; compiled awaited / json-rules-engine = ${(awaited / jre).toFixed(1)}x`)
}

const samples = factSamples()
console.log(`node ${process.version}; ${samples.length} fact objects; ${phaseMs} ms per measurement`)
await benchSet('default rule set', join(root, 'rules'), samples)
await benchSet('every-operator fixture', join(root, 'test/fixtures/rules-good'), samples)
if (sink === undefined) console.log('(no result)')
