// "stopped" is the last line a SIGTERM'd extauth writes, and its time is when the process exits: a log reader
// (or an orchestrator's) that sees it may take the process as gone. Before, the line was stamped first and the
// lines held in the log buffer were written after it, at exit: behind a slow reader (a busy log shipper, a full
// pipe) "stopped" carried a time seconds before the process was gone. Here the reader of the child's stdout
// stops reading while more than a pipe's worth of lines is held, the child is signalled, and the reader
// resumes later: "stopped" must be stamped after it resumed, and be the last line.
import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { startServer } from '../helpers/server-process.js'
import { SHARED_REDIS_URL, deleteByPrefix, uniquePrefix } from '../helpers/redis.js'
import { authBody, platformHeaders } from '../helpers/config.js'
import { newPool } from '../helpers/load.js'

/** more decision lines than the child's stdout holds unread (a Unix socket's buffers, some 200 KiB each way; a line is some 180 bytes) */
const DECISIONS = 3000

t.test('on Redis: "stopped" is the last line, stamped once everything before it is written', async (t) => {
  const prefix = uniquePrefix()
  // its keys deleted afterwards (the server has exited by then: the test waits for it)
  t.teardown(async () => { await deleteByPrefix(SHARED_REDIS_URL, prefix) })
  const server = await startServer(t, { env: { REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: prefix } })
  const stdout = server.proc.stdout
  if (stdout === null) throw new Error('no stdout')
  const pool = newPool(server.publicUrl, 16)
  t.teardown(async () => { await pool.close() })
  stdout.pause()
  // unknown customers: each a decision and its line, no money
  for (let i = 0; i < DECISIONS; i += 16) {
    await Promise.all(Array.from({ length: 16 }, async () => {
      const res = await pool.request({ method: 'POST', path: '/api/v1/externalAuth', headers: platformHeaders(), body: JSON.stringify(authBody({ urn: `NOBODY${i}` })) })
      await res.body.text()
    }))
  }
  server.signal('SIGTERM')
  // the child closes while its lines wait on us; how long it takes does not matter to the check below
  await sleep(2000)
  const resumedAt = Date.now()
  stdout.resume()
  const exit = await server.exited
  t.same(exit, { code: 0, signal: null }, 'exits 0')
  const lines = server.logs()
  // the precondition: more was held unread than the child's stdout buffers take (some 200 KiB each way)
  const bytes = server.rawLogs.join('\n').length
  t.ok(bytes > 400_000, `more lines than the buffers hold were written (${bytes} bytes)`)
  const last = lines.at(-1) as { msg?: string, time?: number }
  t.equal(last.msg, 'stopped', `the last line: ${JSON.stringify(lines.slice(-3).map((l) => l.msg))}`)
  t.ok((last.time ?? 0) >= resumedAt, `stamped after the lines before it were taken in (${String(last.time)} >= ${resumedAt})`)
})
