// Rotating an admin key on a running server: add the new key to ADMIN_KEYS_FILE and send SIGHUP (both keys
// work), move the callers over, remove the old key and SIGHUP again (the old key is refused). A bad file on
// SIGHUP is refused with a log line, and the keys in use stay.
import t from 'tap'
import { startServer } from '../helpers/server-process.js'
import { keysFile } from '../helpers/admin-keys.js'

const OLD = { id: 'backoffice-2026-10', key: 'key-old-1a2b3c4d5e6f7a8b', scopes: ['read' as const] }
const NEW = { id: 'backoffice-2026-11', key: 'key-new-8b7a6f5e4d3c2b1a', scopes: ['read' as const] }

t.test('SIGHUP reloads the keys file; a bad file keeps the keys in use', async (t) => {
  const file = keysFile(t, [OLD])
  const server = await startServer(t, { env: { ADMIN_KEYS_FILE: file.path } })
  const status = async (key: string): Promise<number> => (await fetch(`${server.adminUrl}/admin/v1/rules`, { headers: { authorization: `Bearer ${key}` } })).status
  // the next line with this message: the ones already logged are skipped
  const reloaded = async (msg: string): Promise<Record<string, unknown>> => {
    let skip = server.logs().filter((l) => l.msg === msg).length
    server.signal('SIGHUP')
    return await server.waitForLog((l) => l.msg === msg && skip-- <= 0, 20_000)
  }
  t.equal(await status(OLD.key), 200, 'before: the old key works')
  t.equal(await status(NEW.key), 401, 'before: the new key is unknown')

  file.write([OLD, NEW])
  t.match(await reloaded('SIGHUP: admin keys reloaded'), { keys: 3 }, 'both file keys and ADMIN_TOKEN')
  t.equal(await status(OLD.key), 200, 'during: the old key works')
  t.equal(await status(NEW.key), 200, 'during: the new key works')

  file.write([NEW])
  await reloaded('SIGHUP: admin keys reloaded')
  t.equal(await status(OLD.key), 401, 'after: the old key is refused')
  t.equal(await status(NEW.key), 200, 'after: the new key works')

  file.write('[{"id": "half-written"')
  t.match(await reloaded('admin keys reload refused; the keys in use stay'), { err: /is not JSON/ })
  t.equal(await status(NEW.key), 200, 'a bad file: the keys in use stay')
  t.notOk(server.rawLogs.some((l) => l.includes(NEW.key) || l.includes(OLD.key)), 'no key in the logs')
})
