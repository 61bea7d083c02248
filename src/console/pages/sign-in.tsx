// The sign-in page and the page of a refusal or an error.
import type { VNode } from 'preact'
import { BASE } from '../html.js'

/** on an mTLS admin listener: the key the client certificate is mapped to (null: not mapped); null: no mTLS */
export type CertificateOffer = { keyId: string | null } | null

export function SignInPage ({ csrf, next, idleMinutes, certificate = null }: { csrf: string, next: string, idleMinutes: number, certificate?: CertificateOffer }): VNode {
  return (
    <div class='signin'>
      <h1>Sign in to the extauth console</h1>
      {certificate !== null && certificate.keyId !== null && (
        <form class='action' method='post' action={`${BASE}/sign-in/certificate`}>
          <input type='hidden' name='_csrf' value={csrf} />
          <input type='hidden' name='next' value={next} />
          <p>Your client certificate is mapped to the key <strong>{certificate.keyId}</strong>.</p>
          <button type='submit'>Sign in with your certificate</button>
        </form>
      )}
      {certificate !== null && certificate.keyId === null && (
        <p class='muted'>Your client certificate is not mapped to a key (ADMIN_KEYS_FILE, certFingerprint): sign in with a key.</p>
      )}
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
