import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { effectiveQos } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

/** An endpoint's rate limits: stored with their burst filled in, kept across patches, cleared by `{}`. */

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
  await svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] });
});
afterEach(() => h.close());

describe('endpoint qos', () => {
  it('fills in the burst: 80% of the rate, at least two full frames of the network; a given burst is kept', async () => {
    const { object } = await svc.create('endpoint', {
      id: 'vm1',
      networkId: 'n1',
      qos: { egress: { kbps: 10_000 }, ingress: { kbps: 8, burstKb: 500 } },
    });
    expect(object.qos).toEqual({
      egress: { kbps: 10_000, burstKb: 8_000 },
      ingress: { kbps: 8, burstKb: 500 },
    });
    const small = await svc.create('endpoint', {
      id: 'vm2',
      networkId: 'n1',
      qos: { ingress: { kbps: 10 } },
    });
    // MTU 1450: a frame is 1472 bytes with its header, tag and FCS, 12 kbit; two make 24.
    expect(small.object.qos).toEqual({ ingress: { kbps: 10, burstKb: 24 } });
    await svc.put('network', 'jumbo', { tenantId: 't1', name: 'jumbo', mtu: 8950 });
    const big = await svc.create('endpoint', {
      id: 'vm3',
      networkId: 'jumbo',
      qos: { egress: { kbps: 64 } },
    });
    expect(big.object.qos).toEqual({ egress: { kbps: 64, burstKb: 144 } });
  });

  it('has no qos unless asked, keeps it across unrelated patches, and `{}` clears it', async () => {
    expect((await svc.create('endpoint', { id: 'vm1', networkId: 'n1' })).object.qos).toBeUndefined();
    await svc.update('endpoint', 'vm1', { qos: { egress: { kbps: 1_000 } } });
    const renamed = await svc.update('endpoint', 'vm1', { name: 'web' });
    expect(renamed.object.qos).toEqual({ egress: { kbps: 1_000, burstKb: 800 } });
    const changed = await svc.update('endpoint', 'vm1', { qos: { ingress: { kbps: 2_000, burstKb: 100 } } });
    expect(changed.object.qos).toEqual({ ingress: { kbps: 2_000, burstKb: 100 } });
    const cleared = await svc.update('endpoint', 'vm1', { qos: {} });
    expect(cleared.object.qos).toBeUndefined();
    expect((await svc.get('endpoint', 'vm1')).qos).toBeUndefined();
  });

  it('refuses rates and bursts out of range or not whole, and unknown keys, naming the field; nothing is stored', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ egress: { kbps: 0 } }, /^qos\.egress\.kbps: /],
      [{ egress: { kbps: 100_000_001 } }, /^qos\.egress\.kbps: /],
      [{ ingress: { kbps: 1.5 } }, /^qos\.ingress\.kbps: /],
      [{ ingress: { kbps: 100, burstKb: 4 } }, /^qos\.ingress\.burstKb: /],
      [{ ingress: { burstKb: 100 } }, /^qos\.ingress/],
      [{ both: { kbps: 100 } }, /^qos/],
    ];
    // A burst smaller than one full frame would drop every full-size packet.
    await rejects(
      svc.create('endpoint', { id: 'vm9', networkId: 'n1', qos: { egress: { kbps: 100, burstKb: 11 } } }),
      'invalid',
      /^qos\.egress\.burstKb: 11 kbit holds no full frame of network 'n1' \(MTU 1450: 12 kbit\); give at least 12$/,
    );
    for (const [qos, field] of bad) {
      await rejects(svc.create('endpoint', { id: 'vm9', networkId: 'n1', qos } as never), 'invalid', field);
    }
    expect(() => svc.get('endpoint', 'vm9')).toThrow(/not found/);
    // The service still serves others.
    expect(
      (await svc.create('endpoint', { id: 'vm8', networkId: 'n1', qos: { egress: { kbps: 64 } } })).object
        .qos,
    ).toEqual({ egress: { kbps: 64, burstKb: 52 } });
  });
});

describe('endpoint DSCP marking', () => {
  it('is stored beside the limits or alone, 0 included, kept across patches; out of range or not whole is refused', async () => {
    const { object } = await svc.create('endpoint', { id: 'vm1', networkId: 'n1', qos: { dscp: 46 } });
    expect(object.qos).toEqual({ dscp: 46 });
    const both = await svc.update('endpoint', 'vm1', { qos: { dscp: 0, egress: { kbps: 64 } } });
    expect(both.object.qos).toEqual({ dscp: 0, egress: { kbps: 64, burstKb: 52 } });
    expect((await svc.update('endpoint', 'vm1', { name: 'voice' })).object.qos).toEqual(both.object.qos);
    for (const dscp of [64, -1, 1.5, '46']) {
      await rejects(svc.update('endpoint', 'vm1', { qos: { dscp } } as never), 'invalid', /^qos\.dscp: /);
    }
    expect(svc.get('endpoint', 'vm1').qos).toEqual({ dscp: 0, egress: { kbps: 64, burstKb: 52 } });
    const tenant = await svc.update('tenant', 't1', { qos: { dscp: 10 } });
    expect(tenant.object.qos).toEqual({ dscp: 10 });
  });

  it("is an admin's to set: a tenant token may keep it, not mark itself (403, nothing stored)", async () => {
    await svc.create('endpoint', { id: 'mine', networkId: 'n1' }, { tenantScope: 't1' });
    await rejects(
      svc.update('endpoint', 'mine', { qos: { dscp: 46 } }, { tenantScope: 't1' }),
      'forbidden',
      /^qos: /,
    );
    expect(svc.get('endpoint', 'mine').qos).toBeUndefined();
    await svc.update('endpoint', 'mine', { qos: { dscp: 46 } });
    expect((await svc.update('endpoint', 'mine', { name: 'x' }, { tenantScope: 't1' })).object.qos).toEqual({
      dscp: 46,
    });
  });
});

describe('endpoint qos and tenant tokens', () => {
  const t1 = { tenantScope: 't1' };
  it("lets a tenant keep its endpoints' limits but never set, change or lift them (403, nothing stored)", async () => {
    await rejects(
      svc.create('endpoint', { id: 'mine', networkId: 'n1', qos: { egress: { kbps: 1_000 } } }, t1),
      'forbidden',
      /^qos: an endpoint's rate limits are set by an admin token/,
    );
    expect(() => svc.get('endpoint', 'mine')).toThrow(/not found/);
    await svc.create('endpoint', { id: 'mine', networkId: 'n1' }, t1);
    await svc.update('endpoint', 'mine', { qos: { egress: { kbps: 1_000 } } }); // the admin sets it
    // The tenant renames it (the limit stays), but cannot raise it, clear it or replace it away.
    expect((await svc.update('endpoint', 'mine', { name: 'web' }, t1)).object.qos).toEqual({
      egress: { kbps: 1_000, burstKb: 800 },
    });
    for (const qos of [{ egress: { kbps: 100_000 } }, {}]) {
      await rejects(svc.update('endpoint', 'mine', { qos }, t1), 'forbidden', /^qos: /);
    }
    await rejects(svc.put('endpoint', 'mine', { networkId: 'n1', name: 'web' }, t1), 'forbidden', /^qos: /);
    expect(svc.get('endpoint', 'mine').qos).toEqual({ egress: { kbps: 1_000, burstKb: 800 } });
    // Sending the limit it already has is no change, so allowed (a tenant's PUT round trip).
    const same = await svc.put(
      'endpoint',
      'mine',
      { networkId: 'n1', name: 'web', qos: { egress: { kbps: 1_000, burstKb: 800 } } },
      t1,
    );
    expect(same.object.qos).toEqual({ egress: { kbps: 1_000, burstKb: 800 } });
  });
});

describe("a tenant's default rate limits", () => {
  it('are stored with their burst filled in, set only by an admin, and cleared by {}', async () => {
    const t = await svc.update('tenant', 't1', { qos: { ingress: { kbps: 10_000 } } });
    expect(t.object.qos).toEqual({ ingress: { kbps: 10_000, burstKb: 8_000 } });
    await rejects(
      svc.update('tenant', 't1', { qos: {} }, { tenantScope: 't1' }),
      'forbidden',
      /^qos: a tenant's default rate limits are set by an admin token/,
    );
    await rejects(
      svc.update('tenant', 't1', { qos: { egress: { kbps: 100, burstKb: 12 } } }),
      'invalid',
      /^qos\.egress\.burstKb: 12 kbit holds no full frame of a network \(MTU 1500: 13 kbit\)/,
    );
    expect(svc.get('tenant', 't1').qos).toEqual({ ingress: { kbps: 10_000, burstKb: 8_000 } });
    expect((await svc.update('tenant', 't1', { qos: {} })).object.qos).toBeUndefined();
  });

  it('hold every endpoint without limits of its own, direction by direction', () => {
    const tenant = { ingress: { kbps: 10_000, burstKb: 8_000 }, egress: { kbps: 5_000, burstKb: 4_000 } };
    const own = { egress: { kbps: 50_000, burstKb: 40_000 } };
    expect(effectiveQos(undefined, tenant, 1450)).toEqual(tenant);
    expect(effectiveQos(own, tenant, 1450)).toEqual({ egress: own.egress, ingress: tenant.ingress });
    expect(effectiveQos(own, undefined, 1450)).toBe(own);
    expect(effectiveQos(undefined, undefined, 1450)).toBeUndefined();
    // Each burst holds a full frame of the network as it is now (a jumbo network: 72 kbit).
    const small = { egress: { kbps: 100, burstKb: 26 } };
    expect(effectiveQos(undefined, small, 8950)).toEqual({ egress: { kbps: 100, burstKb: 72 } });
    expect(effectiveQos(small, undefined, 1450)).toBe(small);
  });

  it("keep an endpoint's limit set under a smaller MTU across its other changes", async () => {
    await svc.put('network', 'grow', { tenantId: 't1', name: 'grow', mtu: 1450 });
    await svc.create('endpoint', {
      id: 'vm5',
      networkId: 'grow',
      qos: { egress: { kbps: 100, burstKb: 20 } },
    });
    await svc.update('network', 'grow', { mtu: 8950 });
    // A rename still goes through (its limit is not re-checked); a new limit is checked.
    expect((await svc.update('endpoint', 'vm5', { name: 'web' })).object.qos).toEqual({
      egress: { kbps: 100, burstKb: 20 },
    });
    await rejects(
      svc.update('endpoint', 'vm5', { qos: { egress: { kbps: 200, burstKb: 20 } } }),
      'invalid',
      /^qos\.egress\.burstKb: 20 kbit holds no full frame of network 'grow' \(MTU 8950: 72 kbit\)/,
    );
  });
});
