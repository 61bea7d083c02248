// Copies the Lua files of src/ into dist/, beside the compiled modules that read them when they are loaded
// (src/store/lua-source.ts): tsc emits only what it compiles. The second step of `npm run build`, so of
// `npm start` and of the image's build stage (which copies this file alone: it imports nothing of ours).
// `node --import tsx scripts/copy-lua.ts [OUT_DIR]`: into OUT_DIR instead of dist/ (a build elsewhere).
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** Copies every .lua file below `srcDir` to the same place below `outDir`. */
export function copyLua (srcDir: string, outDir: string): void {
  for (const file of readdirSync(srcDir, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.lua')) continue
    mkdirSync(dirname(join(outDir, file)), { recursive: true })
    copyFileSync(join(srcDir, file), join(outDir, file))
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = fileURLToPath(new URL('..', import.meta.url))
  copyLua(join(root, 'src'), resolve(process.argv[2] ?? join(root, 'dist')))
}
