import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 'acme', { name: 'acme', quotas: { networks: 2, endpoints: 3 } });
  await svc.put('tenant', 'free', { name: 'free' });
});
afterEach(() => h.close());

const net = (id: string, tenantId = 'acme', n = 0) =>
  svc.put('network', id, { tenantId, name: id, subnets: [`10.${n}.0.0/24`] });
const OVER_NETWORKS = /^tenant 'acme' holds 2 of its quota of 2 networks \(quotas\.networks\)/;

describe('tenant quotas', () => {
  it('refuses the object past the quota, naming tenant, count and quota; others are unlimited', async () => {
    await net('n1');
    await svc.create('network', { tenantId: 'acme', name: 'n2', subnets: ['10.1.0.0/24'] });
    const rev = svc.revision();
    const err = await rejects(net('n3', 'acme', 3), 'conflict', OVER_NETWORKS);
    expect(err.details).toEqual({ tenantId: 'acme', quota: 'networks', limit: 2, count: 2 });
    await rejects(svc.create('network', { tenantId: 'acme', name: 'n3' }), 'conflict', OVER_NETWORKS);
    expect(svc.revision()).toBe(rev);
    // A replace of one it holds is no new object; another tenant has no quota.
    await svc.put('network', 'n1', { tenantId: 'acme', name: 'renamed', subnets: ['10.0.0.0/24'] });
    for (let i = 0; i < 5; i++) await net(`f${i}`, 'free', i);
    expect(svc.list('network', { tenantId: 'free' }).items).toHaveLength(5);
  });

  it('counts what is deleted, and holds in a batch (its earlier ops count)', async () => {
    await net('n1');
    const ops = [1, 2, 3, 4].map((i) => ({
      op: 'create' as const,
      kind: 'endpoint' as const,
      id: `e${i}`,
      body: { networkId: 'n1', ips: [`10.0.0.${i + 10}`] },
    }));
    await rejects(
      svc.batch(ops),
      'conflict',
      /^ops\[3\] \(endpoint 'e4'\): tenant 'acme' holds 3 of its quota of 3 endpoints/,
    );
    expect(svc.list('endpoint').items).toEqual([]);
    await svc.batch(ops.slice(0, 3));
    await svc.delete('endpoint', 'e1');
    await svc.batch([ops[3]!]);
    expect(svc.list('endpoint').items.map((e) => e.id)).toEqual(['e2', 'e3', 'e4']);
    expect(svc.usage('acme')).toMatchObject({ networks: 1, endpoints: 3, routers: 0 });
    expect(svc.usage('free')).toMatchObject({ networks: 0, endpoints: 0 });
  });

  it('a quota below what the tenant holds keeps everything and refuses new ones; {} removes it', async () => {
    await net('n1');
    await net('n2', 'acme', 2);
    await svc.update('tenant', 'acme', { quotas: { networks: 1 } });
    expect(svc.list('network', { tenantId: 'acme' }).items).toHaveLength(2);
    await rejects(net('n3', 'acme', 3), 'conflict', /holds 2 of its quota of 1 networks/);
    await svc.update('tenant', 'acme', { quotas: { networks: 0, routers: 0 } });
    await rejects(
      svc.put('router', 'r', { tenantId: 'acme', interfaces: [] }),
      'conflict',
      /quota of 0 routers/,
    );
    await svc.update('tenant', 'acme', { quotas: {} });
    expect(svc.get('tenant', 'acme')).not.toHaveProperty('quotas');
    await net('n3', 'acme', 3);
  });

  it('refuses a bad quota naming the field, and a tenant token cannot set one', async () => {
    await rejects(
      svc.update('tenant', 'acme', { quotas: { networks: -1 } }),
      'invalid',
      /quotas\/networks|quotas\.networks/,
    );
    await rejects(svc.update('tenant', 'acme', { quotas: { ports: 3 } as never }), 'invalid', /ports/);
    // A tenant token may rename its tenant (keeping the quotas), never change them.
    await rejects(
      svc.update('tenant', 'acme', { quotas: { networks: 5 } }, { tenantScope: 'acme' }),
      'forbidden',
      /^quotas: are set by an admin token/,
    );
    await svc.update('tenant', 'acme', { name: 'ACME' }, { tenantScope: 'acme' });
    expect(svc.get('tenant', 'acme').quotas).toEqual({ networks: 2, endpoints: 3 });
  });
});
