// Where a server's allocation goes, for `npm run bench -- --heap-profile DIR`: V8's sampling heap profile of a
// measured run (HeapProfiler.stopSampling's tree, objects already collected kept; bench/lib/alloc-probe.ts takes
// it) read back as bytes per request, by the function that allocated and by the innermost function of the
// repository's own code on the stack (what a change to src/ or bench/ can act on).

export interface CallFrame { functionName: string, url: string, lineNumber: number }
export interface ProfileNode { callFrame: CallFrame, selfSize: number, children: ProfileNode[] }
export interface HeapProfile { head: ProfileNode }

export interface Share { where: string, bytes: number }
export interface Allocation {
  /** every sampled byte, as the profile's sizes add up */
  bytes: number
  /** by the function that allocated, most first */
  byFunction: Share[]
  /** by the innermost frame of the repository's code (src/, bench/) on the stack; `(outside)` when none */
  byOwnCode: Share[]
}

/** A frame as people name it: `decide src/decision/pipeline.js:55`, paths from the repository's root or node_modules. */
export function frameName (f: CallFrame): string {
  const path = f.url.replace(/^.*\/node_modules\//, '').replace(/^.*\/\.bench-build\//, '').replace(/^file:\/\//, '')
  const where = path === '' ? '' : ` ${path}:${f.lineNumber + 1}`
  return `${f.functionName === '' ? '(anonymous)' : f.functionName}${where}`
}

const OWN = /\/\.bench-build\/(src|bench)\/|\/(src|bench)\/[^/]/
const ownCode = (f: CallFrame): boolean => OWN.test(f.url) && !f.url.includes('/node_modules/')

const sorted = (m: Map<string, number>): Share[] =>
  [...m].map(([where, bytes]) => ({ where, bytes })).sort((a, b) => b.bytes !== a.bytes ? b.bytes - a.bytes : a.where < b.where ? -1 : 1)

export function allocation (profile: HeapProfile): Allocation {
  const byFunction = new Map<string, number>()
  const byOwn = new Map<string, number>()
  let bytes = 0
  // iterative: a deep stack must not overflow ours
  const stack: Array<{ node: ProfileNode, own: string }> = [{ node: profile.head, own: '(outside)' }]
  while (stack.length > 0) {
    const { node, own: outer } = stack.pop() as { node: ProfileNode, own: string }
    const name = frameName(node.callFrame)
    const own = ownCode(node.callFrame) ? name : outer
    if (node.selfSize > 0) {
      bytes += node.selfSize
      byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize)
      byOwn.set(own, (byOwn.get(own) ?? 0) + node.selfSize)
    }
    for (const c of node.children) stack.push({ node: c, own })
  }
  return { bytes, byFunction: sorted(byFunction), byOwnCode: sorted(byOwn) }
}

/** The profiles of several runs of one server as one. */
export function merged (all: Allocation[]): Allocation {
  const add = (pick: (a: Allocation) => Share[]): Share[] => {
    const m = new Map<string, number>()
    for (const a of all) for (const s of pick(a)) m.set(s.where, (m.get(s.where) ?? 0) + s.bytes)
    return sorted(m)
  }
  return { bytes: all.reduce((n, a) => n + a.bytes, 0), byFunction: add((a) => a.byFunction), byOwnCode: add((a) => a.byOwnCode) }
}

/** The first `top` lines of each list, in KB per request and share of the whole. */
export function allocationLines (a: Allocation, requests: number, top: number): string[] {
  const line = (s: Share): string => `    ${(s.bytes / requests / 1000).toFixed(2).padStart(6)} KB ${(100 * s.bytes / a.bytes).toFixed(1).padStart(5)} %  ${s.where}`
  return [
    `  sampled: ${(a.bytes / requests / 1000).toFixed(1)} KB a request`,
    '  by the function that allocated:',
    ...a.byFunction.slice(0, top).map(line),
    '  by the innermost function of src/ or bench/ on the stack:',
    ...a.byOwnCode.slice(0, top).map(line)
  ]
}
