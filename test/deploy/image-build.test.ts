// The image's build (tsconfig.build.json, what `npm run build` compiles into dist/) holds the service and the
// command line and leaves the simulators out; a service file importing a simulator would pull it back in, and
// the check says so.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { buildFiles, imageBuildProblems } from '../../scripts/lib/image-build.js'

const root = fileURLToPath(new URL('../../', import.meta.url))

t.test('the real build compiles src/ without src/sim/', async t => {
  const files = buildFiles(join(root, 'tsconfig.build.json'))
  t.ok(files.includes('src/server.ts') && files.includes('src/decision/pipeline.ts'), 'the service is built')
  t.same(files.filter(f => !f.startsWith('src/')), [], 'nothing from outside src/')
  t.same(imageBuildProblems(files), [])
})

t.test('a service file that imports a simulator brings it into the build, and the check fails', async t => {
  const config = JSON.stringify({
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', rootDir: 'src', outDir: 'dist', types: [] },
    include: ['src/**/*.ts'],
    exclude: ['src/sim/**']
  })
  const dir = t.testdir({
    'tsconfig.build.json': config,
    'package.json': '{"type":"module"}',
    src: {
      'server.ts': "import { fake } from './sim/fake.js'\nexport const s = fake\n",
      cli: { 'main.ts': 'export const main = 1\n' },
      sim: { 'fake.ts': 'export const fake = 1\n', 'other.ts': 'export const other = 1\n' }
    }
  })
  const files = buildFiles(join(dir, 'tsconfig.build.json'))
  t.same(files, ['src/cli/main.ts', 'src/server.ts', 'src/sim/fake.ts'], 'the excluded simulator imported by the server is built; the other is not')
  t.same(imageBuildProblems(files), ['the image build compiles the simulator src/sim/fake.ts'])
  t.same(imageBuildProblems(['src/server.ts']), ['the image build leaves out src/cli/main.ts'])
})
