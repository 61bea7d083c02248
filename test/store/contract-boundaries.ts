// The store's boundaries, on both stores: no two customers share a key, whatever their urns and references
// contain, and a number that is not a safe positive integer amount is a programmer error that changes nothing.
import { AssertionError } from 'node:assert'
import type { Test } from 'tap'
import { authInput, funded, rejectionCode, urnFor, type MakeStore } from './contract.js'
import type { Store } from '../../src/store/types.js'
import { bucketOf } from '../../src/store/keys.js'

/** Two urns `base` and `base + suffix` that land in one bucket, so only the key encoding keeps them apart. */
function sameBucketPair (tag: string, suffix: string): [string, string] {
  // FNV's low bits depend only on low bits, so some suffixes never meet: bounded search, loud failure
  const stem = urnFor(tag).slice(0, 10)
  for (let i = 0; i < 100_000; i++) {
    const a = `${stem}${i}`
    if (bucketOf(a) === bucketOf(`${a}${suffix}`)) return [a, `${a}${suffix}`]
  }
  throw new Error(`no urn pair in one bucket for the suffix ${suffix}`)
}

async function thrown (p: Promise<unknown>): Promise<unknown> {
  try {
    await p
  } catch (err) {
    return err
  }
  return null
}

/** A programmer error: an AssertionError from Node, or the error a Lua assertion raises in Redis. */
function isAssertion (err: unknown): boolean {
  return err instanceof AssertionError || (err instanceof Error && /EXTAUTH_ASSERT/.test(err.message))
}

export function boundaryContract (t: Test, make: MakeStore): void {
  t.test('urn and reference never run into each other: "A" + "217:REF" is not "A:217" + "REF"', async (t) => {
    const store = await make(t)
    const [a, b] = sameBucketPair('sep', ':217')
    await store.putCustomer(a, {})
    await store.credit(a, 1000, 'seed')
    await store.putCustomer(b, {})
    t.equal((await store.authorize(authInput(a, { reference: '217:REF', debitAmount: 300 }))).code, '00')
    const other = await store.authorize(authInput(b, { reference: 'REF', debitAmount: 300 }))
    t.same({ code: other.code, replayed: other.replayed }, { code: '51', replayed: false }, 'the second customer (balance 0) is decided on its own')
    t.equal((await store.getCustomer(a))?.available, 700)
    t.equal((await store.getCustomer(b))?.available, 0)
    t.equal(await store.getDecision(b, '217:REF'), null)
  })

  t.test('money-op references of two customers never collide either', async (t) => {
    const store = await make(t)
    const [a, b] = sameBucketPair('sepm', ':217')
    await store.putCustomer(a, {})
    await store.putCustomer(b, {})
    t.match(await store.credit(a, 500, '217:r'), { replayed: false, available: 500 })
    t.match(await store.credit(b, 500, 'r'), { replayed: false, available: 500 }, 'not a replay of the other customer\'s credit')
    t.match(await store.debit(a, 100, '217%3Ar'), { replayed: false, available: 400 }, 'an escaped-looking reference is its own reference')
    t.match(await store.debit(a, 100, '217%3Ar'), { replayed: true, available: 400 })
  })

  t.test('amounts: a negative, fractional, unsafe or non-number amount is refused loudly and changes nothing', async (t) => {
    const store = await make(t)
    const urn = await funded(store, 1000)
    const bad = [-500, 0, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '100' as unknown as number]
    for (const amount of bad) {
      t.ok(isAssertion(await thrown(store.credit(urn, amount, `c${String(amount)}`))), `credit ${String(amount)}`)
      t.ok(isAssertion(await thrown(store.debit(urn, amount, `d${String(amount)}`))), `debit ${String(amount)}`)
      // a zero-amount authorization (an account check) is valid; it holds nothing
      if (amount !== 0) t.ok(isAssertion(await thrown(store.authorize(authInput(urn, { debitAmount: amount })))), `authorize ${String(amount)}`)
    }
    t.equal((await store.authorize(authInput(urn, { debitAmount: 0 }))).code, '00', 'a zero-amount authorization')
    const approved = authInput(urn, { debitAmount: 100 })
    await store.authorize(approved)
    for (const amount of [-1, 0, 2.5, Number.NaN]) {
      t.ok(isAssertion(await thrown(store.reverse(urn, approved.reference, amount))), `reverse ${String(amount)}`)
    }
    t.equal((await store.getCustomer(urn))?.available, 900, 'only the one valid authorization moved money')
    t.equal(await rejectionCode(store.reverse(urn, approved.reference, 101)), 'EXCEEDS_HOLD')
    t.equal((await store.getDecision(urn, approved.reference))?.held, '100')
  })

  t.test('a decision stays findable as long as its limit-window entries count', async (t) => {
    const store = await make(t)
    await checkRetention(t, store)
  })
}

async function checkRetention (t: Test, store: Store): Promise<void> {
  const urn = await funded(store, 1000)
  const monthMs = 31 * 24 * 3600_000
  const input = authInput(urn, { limits: [{ ruleId: 'monthly', mode: 'enforce', measure: 'amount', per: 'urn', windowStartMs: 0, retainMs: monthMs + 3600_000, max: 10_000, code: '61', values: {} }] })
  const before = Date.now()
  await store.authorize(input)
  const rec = await store.getDecision(urn, input.reference)
  const keptMs = (rec?.expiresAtMs ?? 0) - before
  t.ok(keptMs >= monthMs + 3600_000, `kept ${keptMs} ms, at least the window's ${monthMs + 3600_000} ms`)
  const plain = authInput(urn)
  await store.authorize(plain)
  const plainKeptMs = ((await store.getDecision(urn, plain.reference))?.expiresAtMs ?? 0) - before
  t.ok(plainKeptMs >= 7 * 24 * 3600_000, `a decision without window entries is kept at least 7 days (${plainKeptMs} ms)`)
}
