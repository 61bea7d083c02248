// The sign-in page and the page of a refusal or an error.
import type { VNode } from 'preact'
import { BASE } from '../html.js'

export function SignInPage ({ csrf, next, idleMinutes }: { csrf: string, next: string, idleMinutes: number }): VNode {
  return (
    <div class='signin'>
      <h1>Sign in to the extauth console</h1>
      <form class='action' method='post' action={`${BASE}/sign-in`}>
        <input type='hidden' name='_csrf' value={csrf} />
        <input type='hidden' name='next' value={next} />
        <label for='key'>Admin key
          <input id='key' name='key' type='password' required autocomplete='current-password' autofocus />
        </label>
        <button type='submit'>Sign in</button>
      </form>
      <p class='muted'>
        The key is the one the admin API takes as a bearer token (ADMIN_TOKEN or a key of ADMIN_KEYS_FILE); its
        scopes decide what you may see and do. The session ends after {idleMinutes} minutes without activity.
      </p>
    </div>
  )
}

export function ErrorPage ({ title, text, signIn = false }: { title: string, text: string, signIn?: boolean }): VNode {
  return (
    <div>
      <h1>{title}</h1>
      <p>{text}</p>
      {signIn && <p><a href={`${BASE}/sign-in`}>Sign in</a></p>}
    </div>
  )
}
