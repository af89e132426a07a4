// @ts-check
/**
 * The house rules of STYLE.md that a machine can hold: no parameter list past four (a context
 * object instead), no function over 80 lines, no promise left floating or handed to a callback
 * that ignores it, and the MQTT topic layout written only in src/contract. Type-aware
 * (typescript-eslint's project service), over src/ and bench/. No formatting rules: the code's
 * layout is the authors' own, and no formatter runs.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A topic of the contract, as a string or the start of a template literal. */
const TOPIC = '/^stations\\//';
const topicMessage = 'The MQTT topic layout lives in src/contract (topics.ts, sim-topics.ts): build the topic with its helpers.';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/**', 'examples/**', 'scripts/**', 'bin/**', 'deploy/**', '**/*.mjs', '**/*.cjs', 'vitest.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: ['src/**/*.{ts,tsx}', 'bench/**/*.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'max-params': ['error', 4],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
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
