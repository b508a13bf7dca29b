import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', '.playground/', 'migrations/', 'coverage/'] },
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
    // The sandbox (emulator, simulator, playground) stands in for the outside world; the bot
    // that ships must never depend on it.
    files: ['src/**/*.ts', 'commands/**/*.ts'],
    ignores: ['src/sandbox/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)sandbox(/|$)', message: 'The bot\'s runtime code must not import the sandbox (stand-ins for Discord and the music service).' }] },
      ],
    },
  },
  {
    // Command-line entry points talk to a person on a terminal.
    files: ['src/scripts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
