// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '**/node_modules/**', '.data/**', '**/dist/**', 'migrations/.snapshot-*.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  {
    // Tests read untyped JSON responses; `any` there is the honest type.
    files: ['**/*.test.ts', 'test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Imports point one way: the SDK takes only types from the server, the browser snippets nothing at all.
    files: ['sdk/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@leadwire/*', '**/packages/**', '**/apps/**'],
              allowTypeImports: true,
              message: 'sdk/ takes only types from the server.',
            },
          ],
        },
      ],
    },
  },
  {
    // The console is a browser bundle: the router's types for the typed client, and nothing else of the server.
    files: ['apps/console/src/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@leadwire/*', '**/packages/**', '**/apps/server/**'],
              allowTypeImports: true,
              message: 'The console takes only types from the server.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['snippets/**/*.ts'],
    ignores: ['snippets/build.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@leadwire/*', '**/packages/**', '**/apps/**', '**/sdk/**'],
              message: 'The snippets import nothing from the server.',
            },
          ],
        },
      ],
    },
  },
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  // The docs' runnable examples are plain JavaScript that any Node runs without this repository's TypeScript.
  { files: ['docs/examples/**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  { files: ['docs/examples/**/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly' } } },
);
