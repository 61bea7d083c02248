// Every call of a party is the same four steps: post the JSON, read the answer with the call's parser,
// write its one log line (with the references that trace it) and count it.
import type { Logger } from 'pino'
import { interpret, type CallOptions, type Parsed, type PartyClient } from './http.js'
import { logOutcome, type CallObserver } from './log-outcome.js'
import type { Answer, Failed } from './result.js'

/** One call: what is posted where, how its answer is read, and what its log line names. */
export interface PartyCall<R extends Answer> {
  op: string
  path: string
  headers: Record<string, string>
  body: unknown
  parse: (json: unknown) => Parsed<R>
  /** the references of the log line (never a secret: bodies are not logged) */
  refs: Record<string, string | undefined>
}

export type PostCall = <R extends Answer>(c: PartyCall<R>, call?: CallOptions) => Promise<R | Failed>

export function partyCaller (client: PartyClient, log: Logger, observe?: CallObserver): PostCall {
  return async (c, call) => {
    const started = performance.now()
    const res = await client.postJson(c.op, c.path, c.headers, c.body, call)
    const out = res.kind === 'failed' ? res : interpret(res, c.parse)
    logOutcome(log, c.op, c.refs, out, started, observe)
    return out
  }
}
