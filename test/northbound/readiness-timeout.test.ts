import { afterEach, describe, expect, it } from 'vitest';
import { emptyStatus, READINESS_TIMEOUT_MS } from '../../northbound/status.js';
import { type Harness, startHarness } from './harness.js';

/**
 * A store that went silent (Redis behind a network partition: no RST, its PING waits for the
 * client's 5 s command timeout) must not leave /readyz and /v1/status unanswered: found by the
 * HA cut-off test (test/e2e/ha-faults.int.test.ts), where the cut-off instance's /v1/status took
 * 5 s to say it no longer led.
 */
let h: Harness;
afterEach(async () => {
  await h?.close();
});

const silentStore = () => new Promise<never>(() => undefined);

describe('readiness checks that do not answer', () => {
  it('/readyz answers 503 within the timeout, naming the store', async () => {
    h = await startHarness({ readiness: silentStore, readinessTimeoutMs: 200 });
    const started = performance.now();
    const res = await h.app.inject('/readyz?leader=1');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(res.statusCode).toBe(503);
    expect(res.json().checks[0]).toEqual({
      name: 'store',
      ok: false,
      detail: 'the readiness checks did not answer within 200 ms (store unreachable?)',
    });
  });

  it('/v1/status still says what this instance is, with the store unhealthy', async () => {
    h = await startHarness({
      readiness: silentStore,
      readinessTimeoutMs: 200,
      statusProvider: { ...emptyStatus, controller: () => ({ role: 'standby', leaderId: 'c2' }) },
    });
    const started = performance.now();
    const res = await h.app.inject({ url: '/v1/status', headers: h.admin });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(res.statusCode).toBe(200);
    expect(res.json().controller).toMatchObject({
      role: 'standby',
      leaderId: 'c2',
      storeHealthy: false,
      storeDetail: 'the readiness checks did not answer within 200 ms (store unreachable?)',
    });
  });

  it('waits READINESS_TIMEOUT_MS by default, below keepalived curl 1 s', async () => {
    expect(READINESS_TIMEOUT_MS).toBeLessThan(1000);
    h = await startHarness({ readiness: silentStore });
    const started = performance.now();
    const res = await h.app.inject('/readyz');
    const took = performance.now() - started;
    expect(res.statusCode).toBe(503);
    expect(took).toBeGreaterThanOrEqual(READINESS_TIMEOUT_MS - 20);
    expect(took).toBeLessThan(READINESS_TIMEOUT_MS + 500);
  });

  it('a readiness that answers in time is passed through unchanged', async () => {
    h = await startHarness({
      readiness: async () => [{ name: 'store', ok: true, detail: 'fine' }],
      readinessTimeoutMs: 200,
    });
    const res = await h.app.inject('/readyz');
    expect(res.statusCode).toBe(200);
    expect(res.json().checks).toEqual([{ name: 'store', ok: true, detail: 'fine' }]);
  });
});
