// Bytes a server process has allocated on V8's heap, for `npm run bench`'s allocation per request. Loaded
// into the server with `--import` (NODE_OPTIONS), never by the service. On SIGWINCH (the service does not
// use it; SIGUSR2 stops it) it writes
// `<sequence> <bytes allocated since it started>` to ALLOC_PROBE_FILE: the heap's growth plus what every
// collection since freed (V8's GC profiler gives the used size before and after each one), so objects already
// collected count, whatever the collections' timing. Its own records (a few hundred bytes a collection) count
// too, alike in every server.
//
// With ALLOC_PROBE_HEAP set (`npm run bench -- --heap-profile DIR`), V8's sampling heap profiler also runs from
// one reading to the next, objects already collected kept, and after writing a reading the probe writes the
// profile of the interval it closes to `<ALLOC_PROBE_HEAP>.<sequence>.heapprofile` (through a temporary name,
// so the file is whole once it is there), then starts the next. The reading is written first: putting the
// profile into text allocates, and that counts toward the next interval, which no run measures. The sampler's
// own work counts in the interval (a few per cent more bytes, and its CPU time makes the run's CPU figures no
// measure of anything).
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

/** Samples from reading to reading; given the reading's sequence, writes the interval's profile. */
function heapSampler (prefix: string): (seq: number) => void {
  const session = new Session()
  session.connect()
  // a sample every 256 bytes on average (V8's default is 32 KB: too few for a request's few dozen objects)
  const start = async (): Promise<void> => {
    await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
  }
  // one interval's work at a time, in the order of the readings
  let chain = start()
  return (seq) => {
    chain = chain.then(async () => {
      const { profile } = await session.post('HeapProfiler.stopSampling')
      const out = `${prefix}.${seq}.heapprofile`
      writeFileSync(`${out}.part`, JSON.stringify(profile))
      renameSync(`${out}.part`, out)
      await start()
    }).catch((err: unknown) => { process.stderr.write(`alloc-probe: heap profile ${seq}: ${String(err)}\n`) })
  }
}
