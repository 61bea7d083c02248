// Stand-in in the money simulation (docs/operations/standin.md): every process runs the real StandIn with its
// real journal on disk, in a folder that outlives the process's incarnations as a volume does; its appends wait
// in the scheduler like any call, so a kill can come before or after a flush. Beside it, the simulation keeps
// its own account of what the platform was answered in stand-in, from the answers and the store calls alone:
// - standin-within-caps: the distinct references answered 00 in stand-in in one outage (until the store
//   answers and each of them has reached it) stay within the policy's caps per card and per instance;
// - standin-replayed-once: every stand-in approval becomes one new decision in the store, once (a replay that
//   makes a second decision of an approval already replayed is money moved twice), and none is lost: once the
//   instance says it has nothing left to replay, every approval the platform heard has reached the store, or
//   was handed to the exception queue as standin_unconfirmed, which only an approval older than the store
//   surely keeps a decision may be (an earlier replay of it may have been debited and forgotten);
// - standin-negative-told: a replay the model applied below zero is told (a negative_balance exception) by the
//   time the instance has nothing left to replay, even when its answer was lost or its process stopped, unless
//   the customer's balance was back at zero or more in between (the instance looks at the balance as it is
//   when it finds the replay applied) or the approval went to an operator as standin_unconfirmed.
import { FileStandInJournal, type Adopted, type EntryName, type StandInEntry, type StandInJournal } from '../../../src/standin/journal.js'
import { parsePolicy, type StandInPolicy } from '../../../src/standin/policy.js'
import { DECISION_RETENTION_MS_MIN } from '../../../src/store/types.js'

const DAY_MS = 24 * 3_600_000
import { refKey, type ProcessHandle, type SimContext } from './context.js'

/**
 * The simulation's policy: tight enough that its caps bind within one outage (a few cards, a few requests
 * each): perInstance.amount is a few typical approvals, so an ordinary run reaches it (declines by
 * perInstance.amount in the summary) as it reaches the card caps; ECOM off and ATM left out, so both are
 * declined in stand-in.
 */
export const SIM_STANDIN_POLICY = {
  channels: { POS: { enabled: true, perTransactionMax: '3000' }, 'POS-Contactless': { enabled: true }, ECOM: { enabled: false } },
  perCard: { count: 3, amount: '6000' },
  perInstance: { count: 10, amount: '8000' },
  blockedMcc: ['7995']
} as const

/** Above any pid the system hands out (Linux's pid_max is at most 2^22): a dead incarnation's pid is never alive. */
const PID_BASE = 2 ** 23

/** The journal of one process incarnation, in the folder every incarnation shares. */
export function journalOf (dir: string, processId: number): FileStandInJournal {
  return new FileStandInJournal(dir, 'money-sim', PID_BASE + processId)
}

/**
 * The real journal, with each append (its write and flush) a queued call: a kill before it runs loses the
 * line, or finds it flushed and never answered; `standin-journal-late` has the deadline answer 05 while the
 * flush runs.
 */
export class ScheduledJournal implements StandInJournal {
  constructor (private readonly sim: SimContext, private readonly proc: ProcessHandle, readonly disk: FileStandInJournal) {}

  async append (entry: StandInEntry): Promise<void> {
    const sim = this.sim
    if (!this.proc.alive) return await new Promise<void>(() => {})
    await new Promise<void>((resolve, reject) => {
      sim.scheduler.add({
        owner: this.proc.id,
        label: 'journal',
        run: async () => {
          const late = sim.fault(['standin-journal-late']) !== null
          sim.trace?.push(`journal ${JSON.stringify({ urn: entry.input.urn, ref: entry.input.reference, debit: entry.input.debitAmount, attempt: entry.input.attempt })}${late ? ' after the deadline' : ''}`)
          // the line is handed to the journal's write and flush; a late deadline comes while they run
          const flushed = this.disk.append(entry)
          sim.standIn?.journaled(refKey(entry.input.urn, entry.input.reference))
          if (late) sim.attempts.get(entry.input.attempt)?.fireGuard()
          try {
            await flushed
            resolve()
          } catch (err) {
            reject(err as Error)
          }
        },
        orphan: async () => {
          // flushed just before the kill (replayed though never answered), or cut short (skipped on adoption)
          const flushed = sim.rnd() < 0.5
          sim.trace?.push(`journal ${JSON.stringify({ urn: entry.input.urn, ref: entry.input.reference, attempt: entry.input.attempt })} of a dead process: ${flushed ? 'flushed' : 'cut short'}`)
          if (flushed) {
            sim.standIn?.journaled(refKey(entry.input.urn, entry.input.reference))
            await this.disk.append(entry)
          }
        }
      })
    })
  }

  void (e: EntryName): void { this.disk.void(e) }
  done (id: string): void { this.disk.done(id) }
  adopt (): Adopted { return this.disk.adopt() }
  endOutage (): void { this.disk.endOutage() }
  close (): void { this.disk.close() }
}

export type ReplayOutcomeSeen = 'applied' | 'existing' | 'existing_decline' | 'conflict'

interface Use { count: number, amount: number }

export interface StandInFigures {
  /** outage phases run (the store-outage operation) */
  outages: number
  /** store calls refused in an outage */
  refused: number
  /** answers decided in stand-in: 00 (first of a reference, or from the journal), and the rest */
  approved: number
  fromJournal: number
  declined: number
  /** stand-in declines by the policy check or cap that made them (perInstance.amount: the instance's cap reached) */
  declinedBy: Record<string, number>
  /** replays that reached the store, by what the model says they met */
  applied: number
  existing: number
  exceptions: number
  /** replays of an approval the platform never heard (flushed, then killed before the answer) */
  unheard: number
  /** approvals past the store's memory of a decision handed to the exception queue instead of replayed */
  unconfirmed: number
  /** replays that left a balance below zero */
  negative: number
  /** outages (cap windows) closed, and the most one of them used */
  windows: number
  cardCountMax: number
  cardAmountMax: number
  instanceCountMax: number
  instanceAmountMax: number
}

/** The simulation's own account of stand-in (see the top of this file). */
export class StandInBooks {
  readonly policy: StandInPolicy = parsePolicy(SIM_STANDIN_POLICY)
  /** stand-in approvals the platform heard whose replay has not reached the store yet, by refKey */
  readonly owed = new Map<string, { urn: string, last4: string, debit: number }>()
  /** replayed onto another answer the store held (existing_decline, conflict): left to an operator */
  readonly exceptions = new Set<string>()
  /** the approvals (reference and attempt) a replay made a decision of */
  private readonly applied = new Set<string>()
  /**
   * references whose latest journal entry's replay has reached the store, and what it met there: a repeat the
   * instance answers from that entry while it is still pending (it finishes after what the replay met is looked
   * at) owes no replay; if the replay met another answer, the platform's 00 is left to an operator as well
   */
  private readonly reached = new Map<string, ReplayOutcomeSeen>()
  /** replays the model applied below zero that the instance has not told yet: refKey → urn */
  private readonly untold = new Map<string, string>()
  /** when the platform was last answered 00 in stand-in for a reference, by refKey */
  private readonly approvedAt = new Map<string, number>()
  /** caps passed, found while a request was being answered: reported after the step (settled) */
  private readonly overCaps: string[] = []
  private refs = new Set<string>()
  private cards = new Map<string, Use>()
  private instance: Use = { count: 0, amount: 0 }
  readonly figures: StandInFigures = {
    outages: 0, refused: 0, approved: 0, fromJournal: 0, declined: 0, declinedBy: {}, applied: 0, existing: 0, exceptions: 0, unheard: 0, unconfirmed: 0, negative: 0,
    windows: 0, cardCountMax: 0, cardAmountMax: 0, instanceCountMax: 0, instanceAmountMax: 0
  }

  /** The instance told a replay's negative balance (onNegativeBalance). */
  told (key: string): void {
    this.untold.delete(key)
  }

  /** A customer's balance changed in the model: back at zero or more, what its replays left below zero is settled. */
  balance (urn: string, available: number): void {
    if (available < 0 || this.untold.size === 0) return
    for (const [key, u] of this.untold) if (u === urn) this.untold.delete(key)
  }

  /** A new approval of the reference is in a journal: the replay of an earlier one reached nothing of it. */
  journaled (key: string): void {
    this.reached.delete(key)
  }

  /** The platform heard an answer decided in stand-in. */
  answered (sim: SimContext, key: string, urn: string, last4: string, debit: number, code: string, fromJournal: boolean, check?: string): void {
    if (code !== '00') {
      this.figures.declined++
      if (check !== undefined) this.figures.declinedBy[check] = (this.figures.declinedBy[check] ?? 0) + 1
      return
    }
    if (fromJournal) this.figures.fromJournal++
    else this.figures.approved++
    if (!fromJournal || !this.approvedAt.has(key)) this.approvedAt.set(key, sim.clock.now())
    const met = this.reached.get(key)
    if (met === 'existing_decline' || met === 'conflict') this.exceptions.add(key)
    if (!this.owed.has(key) && met === undefined) this.owed.set(key, { urn, last4, debit })
    if (this.refs.has(key)) return
    // one approval of a reference counts once in the caps, however often it is answered
    this.refs.add(key)
    const card = JSON.stringify([urn, last4])
    const c = this.cards.get(card) ?? { count: 0, amount: 0 }
    c.count++
    c.amount += debit
    this.cards.set(card, c)
    this.instance.count++
    this.instance.amount += debit
    const f = this.figures
    f.cardCountMax = Math.max(f.cardCountMax, c.count)
    f.cardAmountMax = Math.max(f.cardAmountMax, c.amount)
    f.instanceCountMax = Math.max(f.instanceCountMax, this.instance.count)
    f.instanceAmountMax = Math.max(f.instanceAmountMax, this.instance.amount)
    const p = this.policy
    if (c.count > p.perCard.count || c.amount > p.perCard.amount) {
      this.overCaps.push(`card ${card}: ${c.count} stand-in approvals for ${c.amount} in one outage (caps ${p.perCard.count}, ${p.perCard.amount}); latest ${key}`)
    }
    if ((p.perInstance.count !== null && this.instance.count > p.perInstance.count) || this.instance.amount > p.perInstance.amount) {
      this.overCaps.push(`the instance: ${this.instance.count} stand-in approvals for ${this.instance.amount} in one outage (caps ${String(p.perInstance.count)}, ${p.perInstance.amount}); latest ${key}`)
    }
  }

  /**
   * A replay of the approval made for `attempt` reached the store; `outcome` is what the model says it met
   * there. (A reference approved again in a later outage, its first decision forgotten, is another attempt.)
   */
  replayed (sim: SimContext, key: string, attempt: string, outcome: ReplayOutcomeSeen, urn: string): void {
    const heard = this.owed.has(key)
    if (outcome === 'applied') {
      this.figures.applied++
      // the model has applied it: what it left is the customer's balance now
      const c = sim.model.customers.get(urn)
      if (c !== undefined && c.available < 0) this.untold.set(key, urn)
      const approval = JSON.stringify([key, attempt])
      if (this.applied.has(approval)) sim.violation('standin-replayed-once', `${key} (attempt ${attempt}): replayed into a second decision`)
      this.applied.add(approval)
      if (!heard) this.figures.unheard++
    } else if (outcome === 'existing') {
      this.figures.existing++
    } else {
      this.figures.exceptions++
      if (heard) this.exceptions.add(key)
    }
    this.owed.delete(key)
    this.reached.set(key, outcome)
    if (!sim.outage && this.owed.size === 0) this.closeWindow()
  }

  /**
   * The instance handed an approval to the exception queue instead of replaying it (standin_unconfirmed): only
   * one the platform was answered at least DECISION_RETENTION_DAYS' minimum less a day ago may be; not debited by the
   * replay, it is left to an operator.
   */
  unconfirmed (sim: SimContext, key: string): void {
    this.figures.unconfirmed++
    const at = this.approvedAt.get(key)
    const age = at === undefined ? null : sim.clock.now() - at
    if (age !== null && age < DECISION_RETENTION_MS_MIN - DAY_MS) {
      sim.violation('standin-replayed-once', `${key}: handed to an operator unreplayed ${age} ms after its stand-in 00, within the store's memory of a decision`)
    }
    if (this.owed.delete(key)) this.exceptions.add(key)
    this.untold.delete(key)
    if (!sim.outage && this.owed.size === 0) this.closeWindow()
  }

  /**
   * A point where the store answers and the instance says how much it has left to replay: with nothing left,
   * nothing the platform heard may be owed.
   */
  settled (sim: SimContext, backlog: number): void {
    for (const detail of this.overCaps.splice(0)) sim.violation('standin-within-caps', detail)
    if (sim.outage) return
    if (backlog === 0 && this.owed.size > 0) {
      const [key, o] = this.owed.entries().next().value as [string, { debit: number }]
      sim.violation('standin-replayed-once', `${this.owed.size} stand-in approvals answered 00 never reached the store, and the instance has nothing left to replay (first: ${key}, ${o.debit})`)
      this.owed.clear()
    }
    if (backlog === 0 && this.untold.size > 0) {
      for (const [key, urn] of this.untold) {
        sim.violation('standin-negative-told', `${key}: its replay left the balance below zero, the balance of ${JSON.stringify(urn)} stayed below zero (now ${sim.model.customers.get(urn)?.available ?? '?'}), and the instance has nothing left to replay without telling it`)
      }
      this.untold.clear()
    }
    if (this.owed.size === 0) this.closeWindow()
  }

  private closeWindow (): void {
    if (this.refs.size === 0) return
    this.figures.windows++
    this.refs = new Set()
    this.cards = new Map()
    this.instance = { count: 0, amount: 0 }
  }
}
