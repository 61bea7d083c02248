// Transfers and unloads under store faults on the embedded store (the rig and the sweeps: held-move-faults.ts;
// the same sweeps on Redis: held-move-faults-redis.test.ts).
import t from 'tap'
import { InjectedStoreFault } from './faulty-store.js'
import { AMOUNT, START, faultSweeps, pair, rig, settle } from './held-move-faults.js'

t.test('a hold given back whose record was not saved is not taken for a hold in force', async (t) => {
  const r = await rig(t)
  const { a, b } = await pair(r)
  const req = { clientTxnId: `TX${process.pid}x0`, fromUrn: a, toUrn: b, fromAccountNumber: `ACC-${a}`, toAccountNumber: `ACC-${b}`, amount: AMOUNT }
  // the platform never receives the first attempt, so the hold is given back; the record of that is lost
  r.sim.faults.set('encrypt', { status: 503, times: 1 })
  r.faulty.arm({ method: 'putLifecycle', at: 3, when: 'before' })
  await t.rejects(r.transfers.transfer(req), InjectedStoreFault)
  t.ok(r.faulty.fired())
  const done = await settle(r, req)
  t.equal(done.status, 'TRANSFERRED')
  t.equal((await r.inner.getCustomer(a))?.available, r.sim.wallets.customer(a)?.balance, 'sender as on the platform')
  t.equal((await r.inner.getCustomer(b))?.available, r.sim.wallets.customer(b)?.balance, 'receiver as on the platform')
  t.equal(((await r.inner.getCustomer(a))?.available ?? 0) + ((await r.inner.getCustomer(b))?.available ?? 0), START, 'no money created')
})

t.test('a request the adapter refuses to build gives the hold back', async (t) => {
  const r = await rig(t)
  const { a, b } = await pair(r)
  const req = { clientTxnId: `TX${process.pid}x1`, fromUrn: a, toUrn: b, fromAccountNumber: '', toAccountNumber: `ACC-${b}`, amount: AMOUNT }
  await t.rejects(r.transfers.transfer(req), { code: 'EXTAUTH_ERR_ADAPTER_BAD_REQUEST' })
  t.equal((await r.inner.getCustomer(a))?.available, START, 'nothing held')
  t.equal(r.sim.faults.count('encrypt'), 0, 'nothing sent')
})

faultSweeps('memory')
