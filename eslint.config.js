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
    // Command-line entry points talk to a person on a terminal.
    files: ['src/scripts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
