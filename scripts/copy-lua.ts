// Copies the Lua files of src/ into dist/, beside the compiled modules that read them when they are loaded
// (src/store/lua-source.ts): tsc emits only what it compiles. The second step of `npm run build`, so of
// `npm start` and of the image's build stage.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
for (const file of readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
  if (!file.endsWith('.lua')) continue
  mkdirSync(dirname(join(root, 'dist', file)), { recursive: true })
  copyFileSync(join(root, 'src', file), join(root, 'dist', file))
}
