// `extauth statement import` and `extauth holds expire` against the store the environment names.
import t from 'tap'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../../src/cli/main.js'
import { sharedRedisStore, SHARED_REDIS_URL } from '../helpers/redis.js'
import { authInput, funded } from '../store/contract.js'
import { DAY, NEXT } from '../helpers/posting-day.js'

const dir = await mkdtemp(join(tmpdir(), 'extauth-cli-statement-'))

function io (env: Record<string, string | undefined>): { out: string[], err: string[], io: Parameters<typeof main>[1] } {
  const out: string[] = []
  const err: string[] = []
  return { out, err, io: { out: (l) => out.push(l), err: (l) => err.push(l), env } }
}

t.test('import a statement, again, a bad one, a dry run; expire holds', async (t) => {
  const store = await sharedRedisStore(t)
  const env = { REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: store.keys.prefix }
  const urn = await funded(store, 10_000)
  const hold = authInput(urn, { debitAmount: 400, fingerprint: 'h', holdExpiresAtMs: Date.now() + 60_000 })
  t.equal((await store.authorize(hold)).code, '00')
  const file = join(dir, 'd1.ndjson')
  await writeFile(file, [
    { statement: { id: 'CLI-1', from: `${DAY}T00:00:00Z`, to: `${NEXT}T00:00:00Z`, complete: false } },
    { platformId: 'CLI-P1', type: 'fee', reference: 'FEE-1', urn, amount: '25', currency: '356', postedAt: `${DAY}T10:00:00Z` }
  ].map((l) => JSON.stringify(l)).join('\n'))
  const a = io(env)
  t.equal(await main(['statement', 'import', file], a.io), 0, a.err.join('\n'))
  t.match(a.out.join('\n'), /statement CLI-1[^\n]*\nlines 1, applied 1/)
  t.match(a.out.join('\n'), /fee\s+1\s+25/)
  const b = io(env)
  t.equal(await main(['statement', 'import', file, '--json'], b.io), 0)
  t.match(JSON.parse(b.out[0] ?? '{}'), { id: 'CLI-1', applied: 1, outcomes: { fee: { count: 1 } } })
  t.equal((await store.getCustomer(urn))?.available, 10_000 - 400 - 25, 'applied once')

  const bad = join(dir, 'bad.ndjson')
  await writeFile(bad, `${JSON.stringify({ statement: { id: 'CLI-2', from: `${DAY}T00:00:00Z`, to: `${NEXT}T00:00:00Z`, complete: false } })}\n{"platformId":"X","type":"fee"}\n`)
  const c = io({})
  t.equal(await main(['statement', 'import', bad, '--dry-run'], c.io), 1, 'a dry run needs no store, and names the bad line')
  t.match(c.err.join('\n'), `${bad}:2: `)
  const d = io({})
  t.equal(await main(['statement', 'import', file], d.io), 2, 'no store named: wrong usage')

  const e = io(env)
  t.equal(await main(['holds', 'expire', '--as-of', new Date(Date.now() + 120_000).toISOString()], e.io), 0, e.err.join('\n'))
  t.match(e.out.join('\n'), /expired 1 hold/)
  t.same((await store.getCustomer(urn))?.available, 10_000 - 25)
  const f = io(env)
  t.equal(await main(['holds', 'expire', '--as-of', 'tomorrow'], f.io), 2)
})
