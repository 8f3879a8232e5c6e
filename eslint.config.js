// Type-checked lint over src, tests and bench; dist and scenario sample repos are not ours to lint.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import acia from './scripts/eslint-layers.mjs';
import ledger from './scripts/eslint-ledger-casts.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'workspace/**', 'coverage/**', '**/*.mjs', '**/*.cjs', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-eval': 'error',
      'no-new-func': 'error',
    },
  },
  {
    // Imports point down only: cli -> app -> team -> agents -> core (table in scripts/layers.mjs).
    files: ['src/**/*.ts', 'src/**/*.tsx'],
    plugins: { acia, ledger },
    rules: { 'acia/layers': 'error', 'ledger/no-ledger-casts': 'error' },
  },
  {
    files: ['tests/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
);
