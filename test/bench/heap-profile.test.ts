// bench/lib/heap-profile.ts on a profile small enough to add up by hand: bytes by the function that allocated,
// by the innermost function of the repository's code on the stack, several runs as one, and the lines per request.
import t from 'tap'
import { allocation, allocationLines, frameName, merged, type CallFrame, type HeapProfile, type ProfileNode } from '../../bench/lib/heap-profile.js'

const frame = (functionName: string, url: string, lineNumber = 0): CallFrame => ({ functionName, url, lineNumber })
const node = (callFrame: CallFrame, selfSize: number, children: ProfileNode[] = []): ProfileNode => ({ callFrame, selfSize, children })

const REPO = 'file:///srv/extauth/.bench-build'
// (root) → route handler (src) → decide (src) → ioredis's Command: 1000 bytes under decide, 300 in decide itself;
// the route handler 200 itself; Node's HTTP parser outside any of our code 500; ioredis reached from our code again
// through another path 100
const profile: HeapProfile = {
  head: node(frame('(root)', ''), 0, [
    node(frame('', `${REPO}/src/http/route.js`, 9), 200, [
      node(frame('decide', `${REPO}/src/decision/pipeline.js`, 54), 300, [
        node(frame('Command', 'file:///srv/extauth/node_modules/ioredis/built/Command.js', 20), 1000)
      ]),
      node(frame('Command', 'file:///srv/extauth/node_modules/ioredis/built/Command.js', 20), 100)
    ]),
    node(frame('parserOnIncoming', 'node:_http_server', 1072), 500)
  ])
}

t.test('frames are named by function, path from the repository or node_modules, and 1-based line', async (t) => {
  t.equal(frameName(frame('decide', `${REPO}/src/decision/pipeline.js`, 54)), 'decide src/decision/pipeline.js:55')
  t.equal(frameName(frame('Command', 'file:///x/node_modules/ioredis/built/Command.js', 20)), 'Command ioredis/built/Command.js:21')
  t.equal(frameName(frame('', '')), '(anonymous)')
})

t.test('bytes by the function that allocated and by the innermost function of our own code', async (t) => {
  const a = allocation(profile)
  t.equal(a.bytes, 2100)
  t.same(a.byFunction, [
    { where: 'Command ioredis/built/Command.js:21', bytes: 1100 },
    { where: 'parserOnIncoming node:_http_server:1073', bytes: 500 },
    { where: 'decide src/decision/pipeline.js:55', bytes: 300 },
    { where: '(anonymous) src/http/route.js:10', bytes: 200 }
  ])
  t.same(a.byOwnCode, [
    { where: 'decide src/decision/pipeline.js:55', bytes: 1300 },
    { where: '(outside)', bytes: 500 },
    { where: '(anonymous) src/http/route.js:10', bytes: 300 }
  ])
})

t.test('two runs add up as one, and the lines give KB a request', async (t) => {
  const m = merged([allocation(profile), allocation(profile)])
  t.equal(m.bytes, 4200)
  t.same(m.byOwnCode.map((s) => s.bytes), [2600, 1000, 600])
  const lines = allocationLines(m, 2, 2)
  t.equal(lines[0], '  sampled: 2.1 KB a request')
  t.match(lines[2] ?? '', /^\s+1\.10 KB\s+52\.4 %\s+Command ioredis\/built\/Command\.js:21$/)
  t.equal(lines.length, 1 + 1 + 2 + 1 + 2, 'the first two of each list')
})
