import { defineConfig } from 'vitest/config';

// Two rings of tests share one runner:
// - unit: pure code (codec, apps, diffing, schemas); fast, no processes.
// - integration: real ovsdb-server / ovs-vswitchd (in network namespaces) and redis-server;
//   these need root and the Debian packages that scripts/test.sh installs.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/**/*.int.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          // Real OVS and Redis instances are heavy on a 2-core machine: run files one at a time.
          fileParallelism: false,
        },
      },
    ],
  },
});
