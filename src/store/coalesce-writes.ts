// The writes a turn of the event loop makes to Redis go out in one system call per connection. Under load many
// decisions send their authorize command in one turn (the poll phase hands over every socket that has a
// request at once), and each `socket.write` of a command is a `write` of its own: on loopback or a fast
// network that call, not Redis, is the largest part of a decision's Node CPU. Corking the connections on the
// turn's first command and uncorking them once the turn's callbacks have run (setImmediate, as ioredis's own
// auto-pipelining waits) hands each connection's commands to the kernel in one `writev`. Nothing else changes:
// each command is still its own, in ioredis's queue, in order; a turn with one command sends it as before, a
// few microseconds later. A client not connected (its commands wait in ioredis's offline queue) is left
// alone; on a Cluster every connected master's connection is corked (a command goes to its slot's master).
import type { Socket } from 'node:net'
import { Redis, Cluster } from 'ioredis'

function socketOf (client: Redis): Socket | null {
  if (client.status !== 'ready') return null
  const stream = (client as unknown as { stream?: Socket }).stream
  return stream === undefined || stream.destroyed ? null : stream
}

export class WriteCoalescer {
  private corked: Socket[] = []
  private readonly uncork = (): void => {
    const all = this.corked
    this.corked = []
    for (const s of all) s.uncork()
  }

  /** Called before a command is sent: the writes of this turn go together. */
  before (client: Redis | Cluster): void {
    if (this.corked.length > 0) return
    const nodes = client instanceof Cluster ? client.nodes('master') : [client]
    for (const node of nodes) {
      const s = socketOf(node)
      if (s === null) continue
      s.cork()
      this.corked.push(s)
    }
    if (this.corked.length > 0) setImmediate(this.uncork)
  }
}
