// What `npm run build` (tsc -b tsconfig.build.json) compiles into dist/, the only code the image carries:
// the files the config includes and every file they import, as TypeScript's own program resolves them. An
// excluded file still lands in dist/ when an included one imports it, so the list is the program's, not the glob's.
import { dirname, relative, sep } from 'node:path'
import ts from 'typescript'

/** The source files the build compiles, as `/`-separated paths relative to the config's folder. */
export function buildFiles (configPath: string): string[] {
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p))
  if (read.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'))
  const dir = dirname(configPath)
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dir, undefined, configPath)
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'))
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options })
  return program.getSourceFiles()
    .map((f) => relative(dir, f.fileName).split(sep).join('/'))
    .filter((f) => !f.startsWith('node_modules/') && !f.startsWith('../') && !f.endsWith('.d.ts'))
    .sort()
}

/** Problems of a build that must hold the service and leave the simulators (src/sim/) out. */
export function imageBuildProblems (files: string[]): string[] {
  const problems: string[] = []
  for (const f of files.filter((f) => f.startsWith('src/sim/'))) problems.push(`the image build compiles the simulator ${f}`)
  for (const f of ['src/server.ts', 'src/cli/main.ts']) if (!files.includes(f)) problems.push(`the image build leaves out ${f}`)
  return problems
}
