import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../controller/engine/engine.js';
import { NotLeaderError } from '../../controller/ha/fenced-port.js';
import { failureReason, registerControllerMetrics } from '../../controller/metrics.js';
import { BundleRejectedError, MeterModRejectedError } from '../../southbound/openflow/session/operations.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import {
  RequestTimeoutError,
  SessionClosedError,
  WriteQueueFullError,
} from '../../southbound/openflow/session/session-errors.js';
import { fakeSources } from './engine/fake-sources.js';
import { MemorySwitch } from './engine/memory-switch.js';

const log = pino({ level: 'silent' });
const DPID = '0000000000000001';

/** The controller's metrics over an engine and an in-memory switch, scraped as /metrics would. */
describe('controller metrics', () => {
  let engine: Engine | undefined;
  afterEach(() => engine?.close());

  it('a failed sync counts by reason and marks the switch failing until a sync succeeds; the intent revision beside the applied one', async () => {
    const { src, factSrc } = fakeSources();
    const registry = new Registry();
    let metrics: ReturnType<typeof registerControllerMetrics> | undefined;
    engine = new Engine(src, factSrc, log, {
      onSyncFailed: (err, dpid) => metrics?.failed(err, dpid),
    });
    metrics = registerControllerMetrics(registry, engine, { size: 1 } as SwitchRegistry, () => 7);
    const sw = new MemorySwitch(DPID);
    factSrc.bind(DPID, 'hv1');
    sw.failNext = true; // the memory switch's refusal is a plain Error: reason other
    engine.attach(sw);
    await expect.poll(() => engine!.status()[0]?.lastError, { timeout: 3000 }).toBeDefined();
    const failing = await registry.metrics();
    expect(failing).toMatch(/^weft_reconcile_failures_total\{dpid="0000000000000001",reason="other"\} 1$/m);
    expect(failing).toMatch(/^weft_switch_sync_failing\{dpid="0000000000000001",chassis="hv1"\} 1$/m);
    expect(failing).toMatch(/^weft_intent_revision 7$/m);
    // The retry dumps and applies: no longer failing, the count stays.
    await expect.poll(() => engine!.status()[0]?.appliedRevision, { timeout: 3000 }).toBe(1);
    const ok = await registry.metrics();
    expect(ok).toMatch(/^weft_switch_sync_failing\{dpid="0000000000000001",chassis="hv1"\} 0$/m);
    expect(ok).toMatch(/^weft_reconcile_failures_total\{dpid="0000000000000001",reason="other"\} 1$/m);
    expect(ok).toMatch(/^weft_switch_applied_revision\{dpid="0000000000000001",chassis="hv1"\} 1$/m);
  });

  it('names the reason of each kind of failure', () => {
    expect(failureReason(new BundleRejectedError(1, []))).toBe('refused');
    expect(failureReason(new MeterModRejectedError([]))).toBe('refused');
    expect(failureReason(new SessionClosedError('unix:x', 'eof'))).toBe('disconnected');
    expect(failureReason(new RequestTimeoutError('BARRIER_REQUEST', 9, 5000))).toBe('timeout');
    expect(failureReason(new WriteQueueFullError('full'))).toBe('timeout');
    expect(failureReason(new NotLeaderError(DPID))).toBe('not-leader');
    expect(failureReason(new Error('boom'))).toBe('other');
  });
});
