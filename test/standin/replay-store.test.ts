// The replay of a stand-in approval in the store (authorize with standIn), on both stores: the same debit,
// window entries, daily totals and event as an online approval, allowed below zero and whatever the card's
// state, controls or limits say now; each reference once.
import t, { type Test } from 'tap'
import { MemoryStore } from '../../src/store/memory.js'
import type { Store } from '../../src/store/types.js'
import { authInput, funded, limit } from '../store/contract.js'
import { controls } from '../store/controls-contract.js'
import { sharedRedisStore } from '../helpers/redis.js'

type Make = (t: Test) => Promise<Store>

function standInInput (urn: string, over: Parameters<typeof authInput>[1] = {}): ReturnType<typeof authInput> {
  const base = authInput(urn, over)
  return { ...base, standIn: true, meta: { ...base.meta, standIn: true } }
}

function suite (name: string, make: Make): void {
  t.test(`${name}: a replayed approval debits below zero, counts in limits and daily totals, once`, async (t) => {
    const store = await make(t)
    const urn = await funded(store, 150)
    await store.putCard(urn, '4321', 'LOST')
    const lim = limit({ max: 1 })
    const ctl = controls([['POS', { dailyMax: 150 }]])
    const input = standInInput(urn, { debitAmount: 100, limits: [lim], controls: ctl, deadlineAtMs: Date.now() - 60_000 })
    const first = await store.authorize(input)
    t.match(first, { code: '00', reason: 'approved', replayed: false, available: 50 }, 'approved though the card is LOST now and the deadline is long past')
    const second = await store.authorize(standInInput(urn, { debitAmount: 100, limits: [lim], controls: ctl }))
    t.match(second, { code: '00', replayed: false, available: -50 }, 'a second stand-in approval takes the balance below zero, past the limit and the daily max')
    t.match(await store.authorize(input), { code: '00', replayed: true }, 'the same reference again: answered from the record')
    t.equal((await store.getCustomer(urn))?.available, -50, 'debited once each')

    await store.putCard(urn, '4321', 'ACTIVE')
    await store.credit(urn, 1000, `top-${urn}`)
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, limits: [lim] })), { code: '65', reason: 'limit' }, 'the replayed approvals count in the limit window')
    t.match(await store.authorize(authInput(urn, { debitAmount: 1, controls: ctl })), { code: '61', reason: 'control_limit', control: { totalBefore: 200 } }, 'and in the daily total')

    const rec = await store.getDecision(urn, input.reference)
    t.match(rec, { code: '00', held: '100', meta: { standIn: true } }, 'the record holds the debit and says standIn')
    t.equal(rec?.limitEntries.length, 1, 'with its window entry')
    t.equal(rec?.controlEntries.length, 1, 'and its daily total')
    const events = (await store.readDecisionStream(urn)).filter((e) => e.type === 'decision.created' && e.reference === input.reference)
    t.equal(events.length, 1, 'one decision.created event')
    t.match(events[0], { code: '00', standIn: 'true' }, 'saying standIn')

    const r = await store.reverse(urn, input.reference, null)
    t.match(r, { released: 100 }, 'a replayed approval is reversed as any other')
  })

  t.test(`${name}: a reference the store already decided is answered from its record, nothing debited`, async (t) => {
    const store = await make(t)
    const urn = await funded(store, 50)
    const online = authInput(urn, { debitAmount: 100 })
    t.match(await store.authorize(online), { code: '51' })
    const replay = { ...standInInput(urn), reference: online.reference, fingerprint: online.fingerprint, debitAmount: 100 }
    t.match(await store.authorize(replay), { code: '51', replayed: true })
    t.equal((await store.getCustomer(urn))?.available, 50)
  })

  t.test(`${name}: an unknown customer: recorded 00, nothing debited or created`, async (t) => {
    const store = await make(t)
    const input = standInInput('UNKNOWNSTANDIN')
    t.match(await store.authorize(input), { code: '00', available: null, replayed: false })
    t.equal(await store.getCustomer('UNKNOWNSTANDIN'), null)
    t.match(await store.getDecision('UNKNOWNSTANDIN', input.reference), { code: '00', held: '0' })
    t.match(await store.reverse('UNKNOWNSTANDIN', input.reference, null), { released: 0 }, 'its reversal releases nothing')
    t.equal(await store.getCustomer('UNKNOWNSTANDIN'), null, 'and makes no customer')
    const credit = await store.credit('UNKNOWNSTANDIN', 100, 'after-reverse').catch((err: unknown) => err)
    t.match(credit, { word: 'CUSTOMER_NOT_FOUND' }, 'which a credit would then reach')
  })
}

suite('memory', async () => new MemoryStore())
suite('redis', async (t) => await sharedRedisStore(t))
