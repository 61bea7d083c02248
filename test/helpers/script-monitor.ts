// What the Lua scripts run on a Redis really touch, seen through MONITOR: the keys each script call was given,
// and the keys of the commands each script ran (including keys a script builds itself, which a Redis Cluster
// would refuse but a standalone Redis accepts). MONITOR shows a script's commands, marked "lua", next to the
// call that ran them; scripts run atomically, so a run of "lua" lines is one script's and never interleaves.
import { Redis } from 'ioredis'
import { keySlot } from './key-slot.js'

interface Teardown { teardown: (fn: () => unknown) => void }

const SCRIPT_CALLS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro'])

export interface ScriptTouch {
  /** 'call': the keys a script call declared; 'body': the keys the commands of one script run touched */
  kind: 'call' | 'body'
  keys: string[]
  /** the distinct Cluster slots of those keys */
  slots: number[]
  /** the commands, for the failure message */
  commands: string[]
}

export interface ScriptMonitor {
  /**
   * Waits until MONITOR has shown everything sent on `client` so far, stops watching, and returns each
   * script call and each script run that touched a key containing `mark`.
   */
  stop: (client: Redis, mark: string) => Promise<ScriptTouch[]>
}

export async function monitorScripts (t: Teardown, url: string): Promise<ScriptMonitor> {
  // monitor() opens a connection of its own; the client it is called on never needs to connect
  const monitor = await new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }).monitor()
  const lines: Array<{ args: string[], source: string }> = []
  const seen: Array<(args: string[]) => void> = []
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    lines.push({ args, source })
    for (const f of seen) f(args)
  })
  t.teardown(() => { monitor.disconnect() })

  return {
    stop: async (client, mark) => {
      // a command of our own after the ones under test: once MONITOR shows it, it has shown them all
      const marker = `${mark}:monitor-end:${Math.random()}`
      const shown = new Promise<void>((resolve) => { seen.push((args) => { if (args[1] === marker) resolve() }) })
      await client.echo(marker)
      await shown
      monitor.disconnect()

      const helper = new Redis(url, { maxRetriesPerRequest: 1 })
      try {
        // the server's own reading of which arguments are keys
        const keysOf = async (args: string[]): Promise<string[]> => {
          const [name, ...rest] = args
          if (rest.length === 0) return []
          try {
            return (await helper.call('COMMAND', 'GETKEYS', name as string, ...rest)) as string[]
          } catch (err) {
            if (/no key arguments/i.test((err as Error).message)) return []
            throw err
          }
        }
        const touches: ScriptTouch[] = []
        // other clients' scripts run on the same server: only a group with `mark` in an argument is ours
        const add = async (kind: ScriptTouch['kind'], group: string[][]): Promise<void> => {
          if (!group.some((args) => args.some((a) => a.includes(mark)))) return
          const keys = (await Promise.all(group.map(keysOf))).flat()
          touches.push({ kind, keys, slots: [...new Set(keys.map(keySlot))], commands: group.map((args) => (args[0] ?? '').toLowerCase()) })
        }
        let body: string[][] = []
        for (const { args, source } of lines) {
          if (source === 'lua') { body.push(args); continue }
          if (body.length > 0) await add('body', body)
          body = []
          if (SCRIPT_CALLS.has((args[0] ?? '').toLowerCase())) await add('call', [args])
        }
        if (body.length > 0) await add('body', body)
        return touches
      } finally {
        helper.disconnect()
      }
    }
  }
}
