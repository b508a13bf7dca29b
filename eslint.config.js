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
    // The simulator keeps its own reading of the music API contract (music-api-sim/contract.ts):
    // borrowing the client's guesses would let a wrong guess pass the contract tests. The regex
    // matches `.../music-api/...` and a bare `.../music-api`, not the sandbox's `music-api-sim/`.
    files: ['src/sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)music-api(/|$)', message: 'The sandbox must not import the music API client (src/music-api): the simulator reads the spec for itself, in music-api-sim/contract.ts.' }] },
      ],
    },
  },
  {
    // Command-line entry points talk to a person on a terminal.
    files: ['src/scripts/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
