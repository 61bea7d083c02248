// A rule set's version: a short hash of its files' names and bytes, so the same files give the same
// version on every instance and any edit (or rename, which can change the order) gives a new one.
import { createHash } from 'node:crypto'

/** Hex digits kept of the sha256: 48 bits, plenty to tell the sets of one program apart. */
export const versionHexLength = 12

export function ruleSetVersion (files: ReadonlyArray<{ name: string, text: string }>): string {
  const h = createHash('sha256')
  for (const f of files) {
    h.update(f.name).update('\u0000').update(f.text).update('\u0000')
  }
  return h.digest('hex').slice(0, versionHexLength)
}
