'use strict';
// ESLint (pinned in package.json's devDependencies), run by lint.sh: the recommended rules on
// every hand-written file; lib/worker_pb.js is generated (regen.sh).
const js = require('@eslint/js');

const nodeGlobals = Object.fromEntries(
  [
    'Buffer',
    'TextDecoder',
    'clearTimeout',
    'console',
    'process',
    'setImmediate',
    'setTimeout',
    '__dirname',
  ].map((name) => [name, 'readonly'])
);

module.exports = [
  { ignores: ['node_modules/', 'lib/worker_pb.js'] },
  js.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'commonjs', globals: nodeGlobals },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      eqeqeq: 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      strict: ['error', 'global'],
    },
  },
];
