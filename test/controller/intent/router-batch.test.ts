import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import { routerMac } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
});
afterEach(() => h.close());

const tenant: BatchOp = { op: 'create', kind: 'tenant', id: 'red', body: { name: 'red' } };
const net = (id: string, subnet: string): BatchOp => ({
  op: 'create',
  kind: 'network',
  id,
  body: { tenantId: 'red', name: id, subnets: [subnet] },
});
const router: BatchOp = {
  op: 'replace',
  kind: 'router',
  id: 'r1',
  body: {
    tenantId: 'red',
    interfaces: [
      { networkId: 'web', ip: '10.0.0.1' },
      { networkId: 'db', ip: '10.0.1.1' },
    ],
  },
};

describe('routers in a batch', () => {
  it('creates a tenant, its networks and a router on them in one commit', async () => {
    const r = await svc.batch([tenant, net('web', '10.0.0.0/24'), net('db', '10.0.1.0/24'), router]);
    expect(r.committed).toBe(true);
    expect(r.results.map((x) => [x.kind, x.id, x.revision])).toEqual([
      ['tenant', 'red', r.revision],
      ['network', 'web', r.revision],
      ['network', 'db', r.revision],
      ['router', 'r1', r.revision],
    ]);
    const web = svc.get('network', 'web');
    expect(svc.get('router', 'r1').interfaces[0]).toMatchObject({ networkId: 'web', ip: '10.0.0.1' });
    expect(svc.get('router', 'r1').interfaces[0]!.mac).toBe(routerMac(web.vni));
  });

  it('refuses a router listed before its networks, naming the op and field; nothing is written', async () => {
    const e = await rejects(
      svc.batch([tenant, router, net('web', '10.0.0.0/24'), net('db', '10.0.1.0/24')]),
      'invalid',
      /^ops\[1\] \(router 'r1'\): interfaces\[0\]\.networkId: network 'web' does not exist/,
    );
    expect(e.field).toBe('ops[1].body.interfaces[0].networkId');
    expect(svc.list('tenant').items).toEqual([]);
  });

  it('deletes the router and its networks in one batch (router first or last), but not the networks alone', async () => {
    await svc.batch([tenant, net('web', '10.0.0.0/24'), net('db', '10.0.1.0/24'), router]);
    await rejects(
      svc.batch([{ op: 'delete', kind: 'network', id: 'web' }]),
      'conflict',
      /^ops\[0\] \(network 'web'\): network 'web' is still used by router\/r1 after the batch/,
    );
    const r = await svc.batch([
      { op: 'delete', kind: 'network', id: 'web' },
      { op: 'delete', kind: 'router', id: 'r1' },
      { op: 'delete', kind: 'network', id: 'db' },
    ]);
    expect(r.committed).toBe(true);
    expect(svc.list('network').items).toEqual([]);
    expect(svc.list('router').items).toEqual([]);
  });

  it('takes a network off one router and onto another in the same batch', async () => {
    await svc.batch([tenant, net('web', '10.0.0.0/24'), net('db', '10.0.1.0/24'), router]);
    const moved: BatchOp = {
      op: 'create',
      kind: 'router',
      id: 'r2',
      body: { tenantId: 'red', interfaces: [{ networkId: 'db', ip: '10.0.1.254' }] },
    };
    await rejects(svc.batch([moved]), 'conflict', /network 'db' is already on router 'r1'/);
    const r1Web: BatchOp = {
      ...router,
      body: { tenantId: 'red', interfaces: [{ networkId: 'web', ip: '10.0.0.1' }] },
    };
    await svc.batch([r1Web, moved]);
    expect(svc.routerOnNetwork('db')?.router.id).toBe('r2');
    expect(svc.routerOnNetwork('web')?.router.id).toBe('r1');
  });
});
