// @ts-check
/**
 * The house rules of STYLE.md that a machine can hold: no parameter list past four (a context
 * object instead), no function over 80 lines, no promise left floating or handed to a callback
 * that ignores it, and the MQTT topic layout written only in src/contract. Type-aware (the program
 * of tsconfig.lint.json), over src/. No formatting rules: the code's layout is the authors' own, and
 * no formatter runs. bench/ is left out: its scripts are run by hand and measured, not shipped.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A topic of the contract, as a string or the start of a template literal. */
const TOPIC = '/^stations\\//';
const topicMessage = 'The MQTT topic layout lives in src/contract (topics.ts, sim-topics.ts): build the topic with its helpers.';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/**', 'test/**', 'examples/**', 'scripts/**', 'bin/**', 'deploy/**', '**/*.mjs', '**/*.cjs', 'vitest.config.ts', 'src/**/*.generated.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['src/**/*.{ts,tsx}'],
    languageOptions: {
      parserOptions: {
        project: './tsconfig.lint.json',
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'max-params': ['error', 4],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // A leading underscore names what is left out on purpose: a rest sibling dropped from an
      // object, a parameter an interface hands over that this implementation does not need.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Off: an async function without await is how this code meets a promise-returning interface
      // (fastify's async plugins and handlers, which fastify calls differently from callback ones;
      // the session stores' interface, whose Redis store awaits), and a throw in it still rejects.
      '@typescript-eslint/require-await': 'off',
      // Off: the control characters are there on purpose, in patterns that find or strip them
      // (terminal output, transcripts, XML reports).
      'no-control-regex': 'off',
      // A `let` that a closure reads and a later line assigns once (the closure runs after it) stays
      // a `let`: a `const` cannot be declared before the closure that needs it.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A rejection handed on as it came (a caught `unknown`) is not a new non-Error rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Off: its finds here are String() of unknown input in messages (a CLI flag, a WebSocket
      // frame, an HTTP status), where the value's own text is wanted and objects do not occur.
      '@typescript-eslint/no-base-to-string': 'off',
      'no-restricted-syntax': [
        'error',
        { selector: `Literal[value=${TOPIC}]`, message: topicMessage },
        { selector: `TemplateElement[value.raw=${TOPIC}]`, message: topicMessage },
      ],
    },
  },
  {
    // The one home of the topic layout.
    files: ['src/contract/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
