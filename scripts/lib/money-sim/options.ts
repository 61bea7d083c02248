// What a simulation run does: its seed and length, the store it runs on, and which operation and fault
// kinds are on. Every kind can be switched off by name (`--off kill,time-jump` or SIM_OFF=...), so a run can
// isolate one finding, and a CI run can leave out what a known, not yet fixed hole would fail on.

export const OP_KINDS = [
  'auth', 'auth-repeat', 'auth-concurrent', 'auth-conflict', 'reverse', 'credit', 'debit', 'customer-status',
  'card-status', 'card-controls', 'load', 'transfer', 'unload', 'resume', 'bad-amount', 'time-jump',
  /** the store unreachable for a phase of requests, then back, and the stand-in approvals replayed (stand-in.ts) */
  'store-outage'
] as const
export type OpKind = typeof OP_KINDS[number]

export const PARTY_FAULT_MODES = ['timeout', '500', 'garbage', 'lost', 'not-sent', 'stall'] as const
export type PartyFaultMode = typeof PARTY_FAULT_MODES[number]

export const FAULT_KINDS = [
  'store-not-sent', 'store-not-sent-repeat', 'store-lost-reply', 'store-slow', 'store-late',
  'record-not-sent', 'record-lost-reply',
  'gateway-timeout', 'gateway-500', 'gateway-garbage', 'gateway-lost', 'gateway-not-sent', 'gateway-stall',
  'prepaid-timeout', 'prepaid-500', 'prepaid-garbage', 'prepaid-lost', 'prepaid-not-sent', 'prepaid-stall',
  /** fundTransfer (or Unload) answered; Decrypt's answer is lost, or unreadable */
  'prepaid-decrypt-lost', 'prepaid-decrypt-garbage',
  'kill',
  /** a kill while a deadline compensation is still waiting to reach the store */
  'kill-compensating',
  /** a kill mid-outage (stand-in journal writes on their way) or mid-replay */
  'kill-standin',
  /** the deadline answers 05 before a stand-in approval's journal line is flushed */
  'standin-journal-late'
] as const
export type FaultKind = typeof FAULT_KINDS[number]

/** Parts of the generated world that can be switched off like a kind. */
export const WORLD_FEATURES = [
  'colliding-keys',
  /** an unload now and then carries a clientTxnId a transfer used: one id space on the platform, two here */
  'shared-txn-ids',
  /** the start state holds card-lifecycle records of every earlier format, mid-call (earlier-records.ts) */
  'earlier-formats',
  /** every process runs with a stand-in policy: a store call that surely did not run is decided in stand-in */
  'standin'
] as const
export type WorldFeature = typeof WORLD_FEATURES[number]

export type StoreKind = 'memory' | 'redis' | 'cluster'

export interface SimOptions {
  seed: number
  steps: number
  store: StoreKind
  off: Set<string>
  /** chance that one store or party call gets a fault (spread over the enabled kinds) */
  faultRate: number
  /** chance of a kill at each point between two calls */
  killRate: number
  /** stop at the first violation (default) or count them all */
  stopOnViolation: boolean
  /** keep the trace of every store call and its answer (for the differential run) */
  trace: boolean
  /** SETTLEMENT_MODE of the decisions: holds adds the invariant that each customer's held is what its approvals still hold */
  settlement?: 'final' | 'holds'
  /** progress lines (every `progressEvery` steps) */
  progress?: (line: string) => void
  progressEvery?: number
}

export function enabled (o: SimOptions, kind: string): boolean {
  return !o.off.has(kind)
}

/** Names given to --off must be known: a typo would silently leave a kind on. */
export function parseOff (text: string | undefined): Set<string> {
  const known = new Set<string>([...OP_KINDS, ...FAULT_KINDS, ...WORLD_FEATURES])
  const off = new Set<string>()
  for (const name of (text ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!known.has(name)) throw new Error(`unknown kind "${name}"; known: ${[...known].join(', ')}`)
    off.add(name)
  }
  return off
}

export function randomSeed (): number {
  return Math.floor(Math.random() * 2 ** 31)
}

export function optionsFromEnv (env: NodeJS.ProcessEnv, defaults: Partial<SimOptions> = {}): SimOptions {
  const num = (v: string | undefined, d: number): number => {
    if (v === undefined || v === '') return d
    const n = Number(v)
    if (!Number.isFinite(n)) throw new Error(`not a number: ${v}`)
    return n
  }
  const off = parseOff(env.SIM_OFF)
  for (const k of defaults.off ?? []) off.add(k)
  return {
    seed: num(env.SIM_SEED, defaults.seed ?? randomSeed()),
    steps: num(env.SIM_STEPS, defaults.steps ?? 1000),
    store: (env.SIM_STORE as StoreKind | undefined) ?? defaults.store ?? 'memory',
    off,
    faultRate: num(env.SIM_FAULT_RATE, defaults.faultRate ?? 0.08),
    killRate: num(env.SIM_KILL_RATE, defaults.killRate ?? 0.004),
    stopOnViolation: defaults.stopOnViolation ?? true,
    trace: defaults.trace ?? false,
    ...((env.SIM_SETTLEMENT ?? defaults.settlement) === 'holds' ? { settlement: 'holds' as const } : {}),
    ...(defaults.progress !== undefined ? { progress: defaults.progress } : {}),
    ...(defaults.progressEvery !== undefined ? { progressEvery: defaults.progressEvery } : {})
  }
}
