import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      '.data',
      '.tools',
      'dist',
      'console/dist',
      'coverage',
      'test/fixtures',
      'test-output',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Settings are handed down from where work enters (README "Settings"): the domain takes them as
    // parameters and may name the Config type, never read the environment itself.
    files: ['src/domain/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '../config.js',
              importNames: ['config'],
              message: 'Take settings as a parameter (README "Settings").',
              allowTypeImports: true,
            },
            {
              name: '../../config.js',
              importNames: ['config'],
              message: 'Take settings as a parameter (README "Settings").',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // The console runs in the browser.
    files: ['console/**'],
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        fetch: 'readonly',
        sessionStorage: 'readonly',
        addEventListener: 'readonly',
        removeEventListener: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URLSearchParams: 'readonly',
        HTMLElement: 'readonly',
        HTMLTextAreaElement: 'readonly',
      },
    },
  },
  {
    // Tests read loosely-typed JSON responses; `any` there keeps assertions readable.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
