// A browser's part for inject-based console tests: keeps the session cookie, reads each page's form token,
// posts forms as a browser does (application/x-www-form-urlencoded, strings only).
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'

export const CONSOLE = '/admin/console'

export class ConsoleClient {
  cookie = ''
  csrf = ''
  constructor (readonly app: FastifyInstance) {}

  private keep (res: LightMyRequestResponse): LightMyRequestResponse {
    const set = res.headers['set-cookie']
    for (const c of [set ?? []].flat()) {
      const pair = c.split(';', 1)[0] as string
      this.cookie = /=$/.test(pair) || /Expires=Thu, 01 Jan 1970/i.test(c) ? '' : pair
    }
    const m = /name="_csrf" value="([^"]+)"/.exec(res.body)
    if (m !== null) this.csrf = m[1] as string
    return res
  }

  async get (path: string): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method: 'GET', url: path, headers: this.cookie === '' ? {} : { cookie: this.cookie } }))
  }

  /** a form post; `_csrf` is this session's token unless the fields say otherwise */
  async post (path: string, fields: Record<string, string>, opts: { csrf?: boolean } = {}): Promise<LightMyRequestResponse> {
    const form = new URLSearchParams({ ...(opts.csrf === false ? {} : { _csrf: this.csrf }), ...fields })
    return this.keep(await this.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(this.cookie === '' ? {} : { cookie: this.cookie }) },
      payload: form.toString()
    }))
  }

  /** GET the page a redirect names */
  async follow (res: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    const to = res.headers.location
    if (typeof to !== 'string') throw new Error(`no redirect: ${res.statusCode} ${res.body.slice(0, 300)}`)
    return await this.get(to)
  }

  async signIn (key: string): Promise<LightMyRequestResponse> {
    await this.get(`${CONSOLE}/sign-in`)
    const res = await this.post(`${CONSOLE}/sign-in`, { key })
    // the page it lands on, as a browser shows it (and the form token of the new session)
    if (res.statusCode === 303) await this.follow(res)
    return res
  }
}

/** the page's text without its tags (what a person reads), spaces folded */
export function textOf (html: string): string {
  return html.replace(/<[^>]+>/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').replace(/\s+/g, ' ')
}
