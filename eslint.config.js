import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', '.dependency-cruiser.cjs', 'migrations/', 'coverage/', 'build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // The jobs table has one owner: job-rows.ts (reads) and transitions.ts (state changes).
    // Others reach it through their named functions. Why: docs/decisions/submit-flows-one-way.md
    files: ['src/**/*.ts', 'commands/**/*.ts'],
    ignores: ['src/pipeline/job-rows.ts', 'src/pipeline/transitions.ts', 'src/db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/db/schema.js'],
              importNames: ['jobs'],
              message: 'The jobs table belongs to src/pipeline/job-rows.ts and transitions.ts: add a named function there.',
            },
          ],
        },
      ],
    },
  },
  {
    // Command-line entry points talk to a person on a terminal.
    files: ['src/scripts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
