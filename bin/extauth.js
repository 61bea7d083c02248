#!/usr/bin/env node
// Runs the TypeScript CLI without a build step: tsx's ESM hooks are registered first, then the CLI is
// imported dynamically (a static import would be resolved before the hooks exist).
import { register } from 'tsx/esm/api'

register()
const { main } = await import('../src/cli/main.ts')
process.exitCode = await main(process.argv.slice(2))
