// How the command line finds itself: whether a module is the one node was asked to run, and the package's
// version, wherever the file sits (src/ through tsx, dist/ after a build, linked onto PATH in the image).
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** True when `moduleUrl` is the script node runs (through any symlink, such as the image's `extauth`). */
export function isMainModule (moduleUrl: string): boolean {
  const script = process.argv[1]
  if (script === undefined) return false
  try {
    return pathToFileURL(realpathSync(script)).href === moduleUrl
  } catch {
    return false
  }
}

/** The version in the nearest package.json above `moduleUrl` that is this package's. */
export function packageVersion (moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl))
  for (;;) {
    const file = join(dir, 'package.json')
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string, version?: string }
      if (pkg.name === 'extauth' && typeof pkg.version === 'string') return pkg.version
    }
    const up = dirname(dir)
    if (up === dir) return 'unknown'
    dir = up
  }
}
