// The admin scopes (docs/operations/admin-access.md): what a key may do on the admin listener. Every admin
// route names the one scope it needs in its route options (`config: { scope }`).
export const SCOPES = ['read', 'customers:write', 'money:write', 'controls:write', 'rules:reload', 'lifecycle', 'events', 'standin'] as const
export type Scope = typeof SCOPES[number]

export function isScope (s: unknown): s is Scope {
  return typeof s === 'string' && (SCOPES as readonly string[]).includes(s)
}

/** The route option that names a route's scope: `app.get(url, { config: scopeOf('read') }, handler)`. */
export function scopeOf (scope: Scope): { scope: Scope } {
  return { scope }
}
