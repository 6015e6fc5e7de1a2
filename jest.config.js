// Jest runs the TypeScript sources directly: @swc/jest strips types (fast, no type-check; `tsc`
// does that in `npm test` first) and keeps ES modules, so jest runs with --experimental-vm-modules.
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }];
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  modulePathIgnorePatterns: ['<rootDir>/dist/'],
};
export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      // The real workflows on a Temporal dev server of their own, with scripted activities, and the
      // replay of recorded histories: no stack needed (only the Temporal CLI it installs).
      ...common,
      displayName: 'workflow',
      testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
      globalSetup: '<rootDir>/test/workflow/global-setup.ts',
      setupFiles: ['<rootDir>/test/support/quiet-temporal.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/bad-input/**/*.test.ts'],
      globalSetup: '<rootDir>/test/integration/global-setup.ts',
      setupFiles: ['<rootDir>/test/support/quiet-temporal.ts'],
      slowTestThreshold: 30,
    },
    // `npm run record-histories` only: real runs on the stack, saved for the replay test.
    ...(process.env.SLIPWAY_RECORD_HISTORIES
      ? [
          {
            ...common,
            displayName: 'record',
            testMatch: ['<rootDir>/test/histories/record.test.ts'],
            globalSetup: '<rootDir>/test/integration/global-setup.ts',
            setupFiles: ['<rootDir>/test/support/quiet-temporal.ts'],
          },
        ]
      : []),
  ],
  testTimeout: 120000,
  // The workflow tests of a file run at once (test.concurrent): mostly waiting on timers and polls.
  maxConcurrency: 16,
  // The Temporal native runtime keeps a handle open after tests (sdk-typescript#928).
  forceExit: true,
};
