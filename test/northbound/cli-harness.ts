import { afterAll, beforeAll, expect } from 'vitest';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * A listening app with tenant t1 and network n1 (10.0.0.0/24) for the `weft` CLI tests, started
 * before the file's tests and closed after them; `setup` adds what a file needs on top.
 */
export function cliHarness(setup?: (h: Harness) => Promise<void>) {
  let h: Harness | undefined;
  let env: Record<string, string> = {};
  beforeAll(async () => {
    h = await startHarness();
    env = { WEFT_API: await h.app.listen({ host: '127.0.0.1', port: 0 }), WEFT_TOKEN: ADMIN };
    await h.intents.put('tenant', 't1', { name: 'one' });
    await h.intents.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] });
    await setup?.(h);
  });
  afterAll(async () => {
    await h?.close();
  });
  const weft = (args: string) => runWeft(args, env);
  return {
    /** The running harness (inside tests and hooks). */
    get h(): Harness {
      if (!h) throw new Error('cliHarness: used outside a test');
      return h;
    },
    weft,
    /** Runs `weft ARGS --json`, expects success, parses what it printed. */
    async json(args: string) {
      const r = await weft(`${args} --json`);
      expect(r.code, r.err).toBe(0);
      return JSON.parse(r.out);
    },
  };
}
