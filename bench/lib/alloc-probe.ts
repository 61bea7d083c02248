// Bytes a server process has allocated on V8's heap, for `npm run bench`'s allocation per request. Loaded
// into the server with `--import` (NODE_OPTIONS), never by the service. On SIGWINCH (the service does not
// use it; SIGUSR2 stops it) it writes
// `<sequence> <bytes allocated since it started>` to ALLOC_PROBE_FILE: the heap's growth plus what every
// collection since freed (V8's GC profiler gives the used size before and after each one), so objects already
// collected count, whatever the collections' timing. Its own records (a few hundred bytes a collection) count
// too, alike in every server.
//
// With ALLOC_PROBE_HEAP set (`npm run bench -- --heap-profile DIR`), V8's sampling heap profiler also runs over
// each run, objects already collected kept. The bench reads at a run's start and at its end, so a run is the
// interval from an odd reading to the next: sampling starts after an odd reading, and after the even one the
// probe writes the run's profile to `<ALLOC_PROBE_HEAP>.<sequence>.heapprofile` (through a temporary name, so
// the file is whole once it is there). Putting the profile into text allocates a lot: it happens after the
// run's last reading, between runs, where no run counts it. The sampler's own work counts in the run (about 1 %
// more bytes, and its CPU time makes the run's CPU figures no measure of anything).
import { GCProfiler, getHeapStatistics } from 'node:v8'
import { renameSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

const file = process.env.ALLOC_PROBE_FILE
const heapPrefix = process.env.ALLOC_PROBE_HEAP
if (file !== undefined && file !== '') {
  const heap = heapPrefix !== undefined && heapPrefix !== '' ? heapSampler(heapPrefix) : null
  const startUsed = getHeapStatistics().used_heap_size
  let freed = 0
  let seq = 0
  let profiler = new GCProfiler()
  profiler.start()
  process.on('SIGWINCH', () => {
    // stop and start again, so the records of collections do not pile up between readings
    const stats = profiler.stop().statistics
    profiler = new GCProfiler()
    profiler.start()
    for (const s of stats) freed += s.beforeGC.heapStatistics.usedHeapSize - s.afterGC.heapStatistics.usedHeapSize
    const allocated = getHeapStatistics().used_heap_size - startUsed + freed
    writeFileSync(file, `${++seq} ${allocated}\n`)
    if (heap !== null) heap(seq)
  })
}

/** Given each reading's sequence: samples from an odd reading (a run's start) to the next, and writes that profile. */
function heapSampler (prefix: string): (seq: number) => void {
  const session = new Session()
  session.connect()
  // in the order of the readings, one step at a time
  let chain = Promise.resolve()
  return (seq) => {
    chain = chain.then(async () => {
      if (seq % 2 === 1) {
        // a sample every 256 bytes on average (V8's default is 32 KB: too few for a request's few dozen objects)
        await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
        return
      }
      const { profile } = await session.post('HeapProfiler.stopSampling')
      const out = `${prefix}.${seq}.heapprofile`
      writeFileSync(`${out}.part`, JSON.stringify(profile))
      renameSync(`${out}.part`, out)
    }).catch((err: unknown) => { process.stderr.write(`alloc-probe: heap profile ${seq}: ${String(err)}\n`) })
  }
}
