// Writes rules/rules.schema.json, the rule files' JSON Schema for editors, from the validator's definitions.
//   npm run rules:schema [-- --check]
// --check: write nothing; exit 1 when the file is not what the source gives (CI uses the test instead).
import { readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { ruleFileJsonSchemaText } from '../src/rules/editor-schema.js'

const target = fileURLToPath(new URL('../rules/rules.schema.json', import.meta.url))
const { values } = parseArgs({ options: { check: { type: 'boolean' } } })
const text = ruleFileJsonSchemaText()
const current = await readFile(target, 'utf8').catch(() => '')
if (values.check === true) {
  if (current !== text) {
    console.error(`rules:schema: ${target} is not current; run npm run rules:schema`)
    process.exit(1)
  }
  console.log(`rules:schema: ${target} is current`)
} else if (current === text) {
  console.log(`rules:schema: ${target} is current`)
} else {
  await writeFile(target, text)
  console.log(`rules:schema: wrote ${target}`)
}
