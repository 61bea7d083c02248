// The lint of `npm run lint` (part of `npm test`). What each rule is for, and why a rule is off or set
// otherwise than its default, is said beside it; docs/development/testing.md says how to run it.
import comments from '@eslint-community/eslint-plugin-eslint-comments/configs'
import { defineConfig, globalIgnores } from 'eslint/config'
import neostandard, { resolveIgnoresFromGitignore } from 'neostandard'
import tseslint from 'typescript-eslint'

export default defineConfig(
  globalIgnores(resolveIgnoresFromGitignore()),

  // Style: neostandard (standard's successor, the Fastify family's), the style the code is written in:
  // two spaces, single quotes, no semicolons, a space before a declaration's parentheses.
  neostandard({ ts: true, noJsx: true }),
  {
    rules: {
      // The code fills a line with several properties and wraps the rest onto the next lines; these two
      // would break every such object into one property a line, or all on one line.
      '@stylistic/object-property-newline': 'off',
      '@stylistic/object-curly-newline': 'off',
      // A table of codes quotes its keys alike, whether a key needs it ('05') or not ('14').
      '@stylistic/quote-props': ['error', 'as-needed', { unnecessary: false }],
      // `void promise` is how no-floating-promises marks a promise left running on purpose.
      'no-void': ['error', { allowAsStatement: true }]
    }
  },

  // A rule switched off for a line says why (`// eslint-disable-next-line <rule> -- why`), names the rule,
  // and is dropped once the line no longer needs it.
  comments.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: { '@eslint-community/eslint-comments/require-description': ['error', { ignore: ['eslint-enable'] }] }
  },

  // Type-aware rules, for what async money code cannot afford and the compiler lets through.
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // The two programs `npm run typecheck` checks (k6/ has its own types). Named rather than found per
      // file (projectService): the same findings for about 15% less CPU time and a quarter less memory here.
      parserOptions: { project: ['./tsconfig.json', './k6/tsconfig.json'], tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      // A promise nobody awaits or catches: its failure is lost (or crashes the process) and whatever
      // follows runs before it finished. tap's `t.test()` is left out: tap queues the subtest, waits for it
      // and reports its failure itself.
      '@typescript-eslint/no-floating-promises': ['error', {
        allowForKnownSafePromises: [{ from: 'package', package: '@tapjs/core', name: 'PromiseWithSubtest' }]
      }],
      // An async function where a callback's result is ignored (an event handler, a `forEach`): its
      // rejection is never seen. Also a promise tested as a condition (always true).
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch on a union without a `default` must name every member, so a new status or family added to
      // the union is a lint error where it is not handled. A `default` is taken as the author's choice for
      // the rest.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // A condition the types say is always true or always false (`a ?? 0 > 0`, a `?.` on what cannot be
      // missing): either the check is dead or the type is wrong about what arrives.
      '@typescript-eslint/no-unnecessary-condition': 'error',
      // No nullable number or string as a condition: `if (amount)` on a `number | undefined` takes 0 for
      // missing, `if (code)` on a `string | undefined` mixes '' with missing. Numbers are held to it too,
      // present or not: `limit || max` would take a limit of 0 (nothing allowed) for no limit. A string
      // that is always there may stand as a condition (`text || 'none'`: empty or not, nothing else).
      '@typescript-eslint/strict-boolean-expressions': ['error', {
        allowString: true,
        allowNumber: false,
        allowNullableObject: true
      }],
      // An async function without an await still returns a promise and turns a throw into a rejection,
      // which is what the store and adapter interfaces and Fastify's handlers expect; the mistake this
      // rule hints at, a forgotten await, is no-floating-promises' finding.
      '@typescript-eslint/require-await': 'off',
      // An assertion that changes nothing has no effect at run time: tidying them finds no defect.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // Its findings here are all `String(x)` of input typed `unknown` and narrowed past null and undefined
      // (to `{}`, which it takes for an object), turned into text on purpose by the simulators and scripts.
      // An object in a template literal is still restrict-template-expressions' finding.
      '@typescript-eslint/no-base-to-string': 'off',
      // A caught failure (typed unknown) passed on as the rejection, unchanged, as only-throw-error allows
      // for `throw`.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }]
    }
  },
  {
    // Tests read answers through light-my-request's `res.json()`, typed `any`, and assert on their shape
    // with tap; typing every answer first would add casts, not checks.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off'
    }
  }
)
