// The `extauth` command line's grammar (commander): commands, arguments, options and help. What each command
// does is handed in, so the grammar reads in one place and tests run the commands through it.
import { Command, CommanderError, Option } from 'commander'
import { packageVersion } from './entry.js'

export { CommanderError }

export interface CliOutput {
  out: (line: string) => void
  err: (line: string) => void
}

export interface RulesOptions {
  timezone?: string
  json?: boolean
}

export interface BacktestOptions extends RulesOptions {
  rules: string
  baseline?: string
  from: string
  to: string
  journal?: string
  workers?: string
  failOnChange?: boolean
}

export interface ExportOptions {
  from: string
  to: string
  out?: string
}

export interface CliActions {
  check: (dir: string | undefined, opts: RulesOptions) => Promise<void>
  test: (dir: string | undefined, cases: string | undefined, opts: RulesOptions) => Promise<void>
  backtest: (opts: BacktestOptions) => Promise<void>
  exportDecisions: (opts: ExportOptions) => Promise<void>
  reindexDecisions: () => Promise<void>
  importStatement?: (file: string, opts: StatementCliOptions) => Promise<void>
  expireHolds?: (opts: { asOf?: string }) => Promise<void>
}

export interface StatementCliOptions {
  map?: string
  id?: string
  from?: string
  to?: string
  complete?: boolean
  dryRun?: boolean
  json?: boolean
}

const timezone = (): Option => new Option('--timezone <zone>', 'IANA zone for hour, dayOfWeek and calendar windows (default: $TIMEZONE or UTC)')
const json = (): Option => new Option('--json', 'print the result as JSON')
const DIR = 'the rule set\'s folder (default: $RULES_DIR or ./rules)'

/** The program, writing through `io`; it never exits the process (a usage error is a thrown CommanderError). */
export function cliProgram (io: CliOutput, actions: CliActions): Command {
  const lines = (write: (line: string) => void) => (text: string): void => { write(text.replace(/\n$/, '')) }
  const program = new Command('extauth')
    .description('Check, test and backtest extauth rule sets; export the decision journal.')
    .version(packageVersion(import.meta.url), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print help (after a command: that command\'s help)')
    .configureOutput({ writeOut: lines(io.out), writeErr: lines(io.err), outputError: (text, write) => { write(text) } })
    .exitOverride()
    .showSuggestionAfterError()
    .showHelpAfterError('(add --help for the usage)')

  const rules = program.command('rules').description('check, test or backtest a rule set')
  rules.command('check')
    .description('validate a rule set as the service would load it (exit 1 when refused)')
    .argument('[dir]', DIR)
    .addOption(timezone()).addOption(json())
    .action(async (dir: string | undefined, opts: RulesOptions) => { await actions.check(dir, opts) })
  rules.command('test')
    .description('run test cases through the decision pipeline on an in-memory store (exit 1 when one fails)')
    .argument('[dir]', DIR)
    .argument('[cases]', 'a cases file, or a folder of them (default: <dir>/cases)')
    .addOption(timezone()).addOption(json())
    .action(async (dir: string | undefined, cases: string | undefined, opts: RulesOptions) => { await actions.test(dir, cases, opts) })
  rules.command('backtest')
    .description('replay recorded decisions through a candidate rule set and report what would change')
    .requiredOption('--rules <dir>', 'the candidate rule set')
    .option('--baseline <dir>', 'compare with this set (default: the rules each decision was made under; at hand: $RULES_DIR or ./rules)')
    .requiredOption('--from <time>', 'start of the range, ISO 8601')
    .requiredOption('--to <time>', 'end of the range (excluded), ISO 8601')
    .option('--journal <file>', 'an export file (extauth decisions export); default: the journal in Redis ($REDIS_URL or $REDIS_CLUSTER_NODES)')
    .option('--workers <n>', 'threads replaying a --journal file (default: processors, at most 4)')
    .option('--fail-on-change', 'exit 1 when any decision changes')
    .addOption(timezone()).addOption(json())
    .action(async (opts: BacktestOptions) => { await actions.backtest(opts) })

  const decisions = program.command('decisions').description('the decision journal')
  decisions.command('export')
    .description('the journal entries of a time range as NDJSON, oldest first (store: $REDIS_URL or $REDIS_CLUSTER_NODES, $REDIS_KEY_PREFIX)')
    .requiredOption('--from <time>', 'start of the range, ISO 8601')
    .requiredOption('--to <time>', 'end of the range (excluded), ISO 8601')
    .option('--out <file>', 'write here instead of standard output')
    .action(async (opts: ExportOptions) => { await actions.exportDecisions(opts) })
  decisions.command('reindex')
    .description('put decisions kept from before the reference index into it, once after that upgrade (store: as export)')
    .action(async () => { await actions.reindexDecisions() })
  const statement = program.command('statement').description('the platform\'s statement (docs/operations/settlement.md)')
  statement.command('import')
    .description('check the whole file, then apply each posting once (store: $REDIS_URL or $REDIS_CLUSTER_NODES, $REDIS_KEY_PREFIX)')
    .argument('<file>', 'the statement: extauth-v1 NDJSON, or another layout with --map')
    .option('--map <name>', 'a named map of $STATEMENT_MAPS_FILE')
    .option('--id <id>', 'a mapped statement\'s id (extauth-v1 carries its own)')
    .option('--from <time>', 'a mapped statement\'s period start, ISO 8601 (default: its first postedAt)')
    .option('--to <time>', 'a mapped statement\'s period end, ISO 8601 (default: its last postedAt)')
    .option('--complete', 'a mapped statement holds every posting of its period')
    .option('--dry-run', 'check only, apply nothing (needs no store)')
    .addOption(json())
    .action(async (file: string, opts: StatementCliOptions) => { await actions.importStatement?.(file, opts) })
  program.command('holds').description('authorization holds (SETTLEMENT_MODE=holds)')
    .command('expire')
    .description('release the holds due now (every instance also does this on its own; running it twice expires nothing twice)')
    .option('--as-of <time>', 'expire what is due at this ISO 8601 time instead of now')
    .action(async (opts: { asOf?: string }) => { await actions.expireHolds?.(opts) })
  return program
}
