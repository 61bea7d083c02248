// Bytes a server process has allocated on V8's heap, for `npm run bench`'s allocation per request. Loaded
// into the server with `--import` (NODE_OPTIONS), never by the service. On SIGWINCH (the service does not
// use it; SIGUSR2 stops it) it writes
// `<sequence> <bytes allocated since it started>` to ALLOC_PROBE_FILE: the heap's growth plus what every
// collection since freed (V8's GC profiler gives the used size before and after each one), so objects already
// collected count, whatever the collections' timing. Its own records (a few hundred bytes a collection) count
// too, alike in every server.
import { GCProfiler, getHeapStatistics } from 'node:v8'
import { writeFileSync } from 'node:fs'

const file = process.env.ALLOC_PROBE_FILE
if (file !== undefined && file !== '') {
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
  })
}
