import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConverged } from './converged.js';
import { type E2e, startE2e } from './harness.js';
import { createRedBlue, RED_BLUE_VMS } from './red-blue.js';

/**
 * weft end to end: a real controller (embedded store, REST API, OVSDB manager, OpenFlow) and a
 * real two-hypervisor lab (OVS userspace datapath, VXLAN underlay, VMs in namespaces). Tenants,
 * networks and endpoints are created through the REST API with ?wait=applied, then real pings
 * and TCP connections prove reachability within a tenant across hypervisors and isolation between
 * two tenants using the SAME addresses.
 */
let e: E2e;

beforeAll(async () => {
  e = await startE2e(2, RED_BLUE_VMS);
}, 120_000);

afterAll(async () => {
  await e?.close();
}, 60_000);

describe('tenant overlays end to end', () => {
  it('registers both hypervisors as chassis from OVSDB alone', async () => {
    await expect
      .poll(async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length, { timeout: 20_000 })
      .toBe(2);
  });

  it('carries traffic within a tenant across hypervisors and keeps tenants with the same IPs apart', async () => {
    await createRedBlue(e.api);
    await expect
      .poll(async () => (await e.lab.ping('r1', '10.0.0.2', { count: 1, timeoutS: 1 })).received, {
        timeout: 20_000,
      })
      .toBe(1);
    expect((await e.lab.ping('r1', '10.0.0.2', { count: 5, intervalMs: 100 })).received).toBe(5);
    expect((await e.lab.ping('b2', '10.0.0.1', { count: 5, intervalMs: 100 })).received).toBe(5);
    // The same IP answers from the sender's own tenant, never from the other one.
    expect(await e.lab.tcpProbe('r1', '10.0.0.2', 8080)).toBe('r2');
    expect(await e.lab.tcpProbe('b1', '10.0.0.2', 8080)).toBe('b2');
  }, 90_000);

  it('exposes the controller metrics: switches, flows per switch, applied revision, reconcile and rollout time', async () => {
    const res = await fetch(`${e.controller.apiUrl}/metrics`, {
      headers: { authorization: 'Bearer e2e-admin-token-0123456789' },
    });
    const text = await res.text();
    expect(text).toMatch(/^weft_switches_connected 2$/m);
    expect(text).toMatch(/^weft_switch_flows\{dpid="[0-9a-f]{16}",chassis="hv1"\} [1-9]\d*$/m);
    expect(text).toMatch(/^weft_switch_applied_revision\{dpid="[0-9a-f]{16}",chassis="hv2"\} [1-9]\d*$/m);
    expect(text).toMatch(/^weft_reconcile_seconds_count\{dumped="true"\} [1-9]\d*$/m);
    // Both switches in step, none failing: alerting compares these two and watches the third.
    const intentRevision = Number(/^weft_intent_revision (\d+)$/m.exec(text)?.[1]);
    expect(intentRevision).toBeGreaterThan(0);
    const applied = [...text.matchAll(/^weft_switch_applied_revision\{[^}]*\} (\d+)$/gm)].map((m) =>
      Number(m[1]),
    );
    expect(applied).toEqual([intentRevision, intentRevision]);
    expect(text).toMatch(/^weft_switch_sync_failing\{dpid="[0-9a-f]{16}",chassis="hv1"\} 0$/m);
    // Every revision written above reached both switches: its rollout was timed.
    expect(text).toMatch(/^weft_revision_rollout_seconds_count [1-9]\d*$/m);
    // /v1/status says how each switch's last sync went.
    const status = (await (
      await fetch(`${e.controller.apiUrl}/v1/status`, {
        headers: { authorization: 'Bearer e2e-admin-token-0123456789' },
      })
    ).json()) as {
      switches: Array<{ lastSync?: { revision: number; durationMs: number }; lastError?: string }>;
    };
    expect(status.switches).toHaveLength(2);
    for (const sw of status.switches) {
      expect(sw.lastSync?.revision).toBeGreaterThan(0);
      expect(sw.lastSync?.durationMs).toBeGreaterThan(0);
      expect(sw.lastError).toBeUndefined();
    }
  });

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
