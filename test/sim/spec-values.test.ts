// The simulators are written from the spec: they take no value from the adapters or the service (paths,
// actions, code tables), so an adapter that is wrong about the spec disagrees with its simulator.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

const SIM_DIR = fileURLToPath(new URL('../../src/sim/', import.meta.url))
// the log redaction paths are how the simulators keep secrets out of their logs, not a value of the spec
const ALLOWED = new Set(['../redact.js'])

t.test('no simulator imports a value from outside src/sim', async (t) => {
  const files = (await readdir(SIM_DIR)).filter((f) => f.endsWith('.ts'))
  t.ok(files.length > 10, 'the simulators were found')
  const offending: string[] = []
  for (const f of files) {
    const text = await readFile(join(SIM_DIR, f), 'utf8')
    for (const m of text.matchAll(/^(?:import|export)\s+(type\s+)?[^'"]*from\s+'(\.\.\/[^']+)'/gm)) {
      if (m[1] === undefined && !ALLOWED.has(m[2] ?? '')) offending.push(`${f}: ${m[2] ?? ''}`)
    }
  }
  t.same(offending, [])
})
