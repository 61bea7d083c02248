// The writes a turn of the event loop makes to a Redis connection go out in one system call. Under load many
// decisions send their authorize command in one turn (the poll phase hands over every socket that has a
// request at once), and each `socket.write` of a command is a `write` of its own: on loopback or a fast
// network that call, not Redis, is the largest part of a decision's Node CPU. Corking the socket on the turn's
// first command and uncorking it once the turn's callbacks have run (setImmediate, as ioredis's own
// auto-pipelining waits) hands them to the kernel in one `writev`. Nothing else changes: each command is
// still its own, in ioredis's queue, in order; a turn with one command sends it as before, a few microseconds
// later. A client not connected (commands wait in ioredis's offline queue) is left alone, and so is a Cluster,
// whose commands go to several sockets.
import type { Socket } from 'node:net'
import { Redis, type Cluster } from 'ioredis'

export class WriteCoalescer {
  private corked: Socket | null = null
  private readonly uncork = (): void => {
    const s = this.corked
    this.corked = null
    s?.uncork()
  }

  /** Called before a command is sent: the connection's writes of this turn go together. */
  before (client: Redis | Cluster): void {
    if (this.corked !== null || !(client instanceof Redis) || client.status !== 'ready') return
    const stream = (client as unknown as { stream?: Socket }).stream
    if (stream === undefined || stream.destroyed) return
    stream.cork()
    this.corked = stream
    setImmediate(this.uncork)
  }
}
