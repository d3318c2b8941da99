import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
  await svc.put('tenant', 't2', { name: 'two' });
});
afterEach(() => h.close());

const net = (id: string, extra: Record<string, unknown> = {}): BatchOp => ({
  op: 'create',
  kind: 'network',
  id,
  body: { tenantId: 't1', name: id, subnets: ['10.0.0.0/24'], ...extra },
});
const ep = (id: string, networkId: string, ip: string): BatchOp => ({
  op: 'create',
  kind: 'endpoint',
  id,
  body: { networkId, ips: [ip] },
});

describe('batch: one atomic commit', () => {
  it('creates a network and endpoints referring to it at one revision, with per-op results', async () => {
    const before = svc.revision();
    const ops: BatchOp[] = [net('n1'), ...[1, 2, 3].map((i) => ep(`e${i}`, 'n1', `10.0.0.${i}`))];
    const r = await svc.batch(ops);
    expect(r).toMatchObject({ revision: before + 1, committed: true, dryRun: false, replayed: false });
    expect(r.results).toEqual([
      {
        index: 0,
        op: 'create',
        kind: 'network',
        id: 'n1',
        revision: before + 1,
        created: true,
        changed: true,
      },
      ...[1, 2, 3].map((i) => ({
        index: i,
        op: 'create',
        kind: 'endpoint',
        id: `e${i}`,
        revision: before + 1,
        created: true,
        changed: true,
      })),
    ]);
    expect(svc.revision()).toBe(before + 1);
    expect(svc.get('endpoint', 'e3')).toMatchObject({
      networkId: 'n1',
      ips: ['10.0.0.3'],
      revision: before + 1,
    });
  });

  it('delivers the batch as one change event holding every object', async () => {
    const events: Array<{ revision: number; n: number }> = [];
    svc.onChange((ev) => events.push({ revision: ev.revision, n: ev.changes.length }));
    const r = await svc.batch([net('n1'), ep('e1', 'n1', '10.0.0.1'), ep('e2', 'n1', '10.0.0.2')]);
    expect(events).toEqual([{ revision: r.revision, n: 3 }]);
  });

  it('op 7 of 10 invalid: nothing is committed and the error names op 7, its kind, id and field', async () => {
    const before = svc.revision();
    const ops: BatchOp[] = [
      net('n1'),
      ...Array.from({ length: 9 }, (_, i) => ep(`e${i}`, 'n1', `10.0.0.${i + 1}`)),
    ];
    ops[7] = ep('e-bad', 'n1', '192.168.1.1');
    const err = await rejects(
      svc.batch(ops),
      'conflict',
      /^ops\[7\] \(endpoint 'e-bad'\): ips\[0\]: 192\.168\.1\.1 is outside the subnets of network 'n1'/,
    );
    expect(err.field).toBe('ops[7].body.ips[0]');
    expect(err.details).toMatchObject({ op: 7, kind: 'endpoint', id: 'e-bad' });
    expect(svc.revision()).toBe(before);
    expect(svc.list('network').items).toEqual([]);
    expect(svc.list('endpoint').items).toEqual([]);
    // The in-memory working copy was rolled back too: the same ids are free for the next write.
    const ok = await svc.batch(ops.filter((_, i) => i !== 7));
    expect(ok.results).toHaveLength(9);
    await expect(h.store.currentRevision()).resolves.toBe(before + 1);
  });

  it('shares the write pipeline with single writes: a refused batch does not disturb them', async () => {
    await svc.batch([net('n1')]);
    const rev = svc.revision();
    // Issued in the same tick: the pipeline plans them in order against one working copy.
    const [a, b, c] = await Promise.allSettled([
      svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.5'] }),
      svc.batch([ep('b1', 'n1', '10.0.0.4'), ep('b2', 'n1', '10.0.0.5')]),
      svc.create('endpoint', { id: 'b1', networkId: 'n1', ips: ['10.0.0.6'] }),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(b.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason.message).toMatch(
      /^ops\[1\] \(endpoint 'b2'\): ips\[0\]: 10\.0\.0\.5 is already used/,
    );
    // The batch's op 0 (b1) was rolled back, so the id and the address are free for others.
    expect(c.status).toBe('fulfilled');
    expect(svc.get('endpoint', 'b1').ips).toEqual(['10.0.0.6']);
    expect(svc.revision()).toBe(rev + 2);
    const ok = await svc.batch([ep('b3', 'n1', '10.0.0.4')]);
    expect(ok.revision).toBe(rev + 3);
  });

  it('keeps VNIs, MACs and IPs unique across the ops of one batch', async () => {
    const r = await svc.batch([net('a'), net('b'), ep('e1', 'a', '10.0.0.1'), ep('e2', 'b', '10.0.0.1')]);
    expect(svc.get('network', 'a').vni).not.toBe(svc.get('network', 'b').vni);
    expect(r.results).toHaveLength(4);
    await rejects(
      svc.batch([ep('x1', 'a', '10.0.0.9'), ep('x2', 'a', '10.0.0.9')]),
      'conflict',
      /^ops\[1\] \(endpoint 'x2'\): ips\[0\]: 10\.0\.0\.9 is already used in network 'a'/,
    );
    await rejects(
      svc.batch([net('c', { vni: 7000 }), net('d', { vni: 7000 })]),
      'conflict',
      /^ops\[1\] \(network 'd'\): vni: 7000 is already used/,
    );
    await rejects(
      svc.batch([ep('e1', 'a', '10.0.0.2')]),
      'conflict',
      /^ops\[0\] \(endpoint 'e1'\): id: endpoint 'e1' already exists/,
    );
  });

  it('refers only to what exists at that point of the batch', async () => {
    await rejects(
      svc.batch([ep('e1', 'n1', '10.0.0.1'), net('n1')]),
      'invalid',
      /^ops\[0\] \(endpoint 'e1'\): networkId: network 'n1' does not exist/,
    );
    expect(svc.list('network').items).toEqual([]);
  });

  it('replaces (creating or changing) and reports unchanged objects without writing them', async () => {
    await svc.batch([net('n1')]);
    const rev = svc.revision();
    const same: BatchOp = {
      op: 'replace',
      kind: 'network',
      id: 'n1',
      body: { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] },
    };
    const vni = svc.get('network', 'n1').vni;
    const noop = await svc.batch([{ ...same, body: { ...same.body, vni } }]);
    expect(noop).toMatchObject({ committed: false, revision: rev });
    expect(noop.results[0]).toMatchObject({ created: false, changed: false, revision: rev });
    const r = await svc.batch([
      { ...same, body: { ...same.body, vni, name: 'renamed' } },
      { op: 'replace', kind: 'network', id: 'n2', body: { tenantId: 't1', name: 'n2' } },
    ]);
    expect(r.results.map((x) => [x.id, x.created, x.changed, x.revision])).toEqual([
      ['n1', false, true, rev + 1],
      ['n2', true, true, rev + 1],
    ]);
    expect(svc.get('network', 'n1').name).toBe('renamed');
  });

  it('checks If-Match per op against the object before the batch', async () => {
    await svc.batch([net('n1')]);
    const cur = svc.get('network', 'n1').revision;
    const body = { tenantId: 't1', name: 'x', subnets: ['10.0.0.0/24'] };
    const e = await rejects(
      svc.batch([net('n2'), { op: 'replace', kind: 'network', id: 'n1', ifMatch: cur + 5, body }]),
      'precondition_failed',
      new RegExp(`^ops\\[1\\] \\(network 'n1'\\): If-Match ${cur + 5}: network 'n1' is at revision ${cur}`),
    );
    expect(e.field).toBe('ops[1].ifMatch');
    await rejects(() => svc.get('network', 'n2'), 'not_found');
    await svc.batch([{ op: 'delete', kind: 'network', id: 'n1', ifMatch: cur }]);
  });
});

describe('batch: every kind', () => {
  it('creates objects of every kind referring to each other, then deletes them all in any order', async () => {
    const ops: BatchOp[] = [
      { op: 'create', kind: 'tenant', id: 'acme', body: { name: 'ACME' } },
      { op: 'create', kind: 'chassis', id: 'hv1', body: { name: 'hv1', tunnelIp: '192.0.2.11' } },
      { op: 'create', kind: 'securityGroup', id: 'db', body: { tenantId: 'acme', name: 'db' } },
      {
        op: 'create',
        kind: 'securityGroup',
        id: 'web',
        body: {
          tenantId: 'acme',
          name: 'web',
          rules: [
            { direction: 'egress', ethertype: 'ipv4', protocol: 'tcp', portMin: 5432, remoteGroupId: 'db' },
          ],
        },
      },
      {
        op: 'create',
        kind: 'network',
        id: 'blue',
        body: { tenantId: 'acme', name: 'blue', subnets: ['10.0.0.0/24'] },
      },
      {
        op: 'create',
        kind: 'endpoint',
        id: 'vm1',
        body: { networkId: 'blue', ips: ['10.0.0.5'], securityGroupIds: ['web'] },
      },
      {
        op: 'create',
        kind: 'networkAcl',
        id: 'acl1',
        body: {
          networkId: 'blue',
          priority: 10,
          direction: 'ingress',
          action: 'drop',
          protocol: 'udp',
          portMin: 53,
        },
      },
      {
        op: 'create',
        kind: 'vlanBinding',
        id: 'vb1',
        body: { chassisId: 'hv1', port: 'eth1', vlan: 100, networkId: 'blue' },
      },
    ];
    const made = await svc.batch(ops);
    expect(made.results.map((r) => [r.kind, r.id, r.created])).toEqual(ops.map((o) => [o.kind, o.id, true]));
    expect(svc.get('endpoint', 'vm1').tenantId).toBe('acme');
    expect(svc.get('securityGroup', 'web').rules[0]).toMatchObject({ remoteGroupId: 'db', portMax: 5432 });
    // Every delete refers to something another op of the batch removes: the order does not matter.
    const deletes: BatchOp[] = ops.map((o) => ({ op: 'delete', kind: o.kind, id: o.id! }));
    const gone = await svc.batch(deletes);
    expect(gone.committed).toBe(true);
    for (const o of ops) await rejects(() => svc.get(o.kind, o.id!), 'not_found');
    expect(svc.list('tenant').items.map((t) => t.id)).toEqual(['t1', 't2']);
  });

  it('refuses deleting a security group another group still refers to', async () => {
    await svc.batch([
      { op: 'create', kind: 'securityGroup', id: 'a', body: { tenantId: 't1', name: 'a' } },
      {
        op: 'create',
        kind: 'securityGroup',
        id: 'b',
        body: {
          tenantId: 't1',
          name: 'b',
          rules: [{ direction: 'ingress', ethertype: 'ipv4', protocol: 'any', remoteGroupId: 'a' }],
        },
      },
    ]);
    await rejects(
      svc.batch([{ op: 'delete', kind: 'securityGroup', id: 'a' }]),
      'conflict',
      /^ops\[0\] \(securityGroup 'a'\): securityGroup 'a' is still used by securityGroup\/b after the batch/,
    );
    // Rewriting b without the reference in the same batch makes the delete valid.
    const r = await svc.batch([
      { op: 'delete', kind: 'securityGroup', id: 'a' },
      { op: 'replace', kind: 'securityGroup', id: 'b', body: { tenantId: 't1', name: 'b' } },
    ]);
    expect(r.results.map((x) => x.changed)).toEqual([true, true]);
  });
});

describe('batch: deletes', () => {
  beforeEach(async () => {
    await svc.batch([net('n1'), ep('e1', 'n1', '10.0.0.1'), ep('e2', 'n1', '10.0.0.2')]);
  });

  it('deletes a network whose endpoints go in the same batch, in either order', async () => {
    const r = await svc.batch([
      { op: 'delete', kind: 'network', id: 'n1' },
      { op: 'delete', kind: 'endpoint', id: 'e1' },
      { op: 'delete', kind: 'endpoint', id: 'e2' },
    ]);
    expect(r.results.map((x) => x.deleted)).toEqual([
      [{ kind: 'network', id: 'n1' }],
      [{ kind: 'endpoint', id: 'e1' }],
      [{ kind: 'endpoint', id: 'e2' }],
    ]);
    expect(svc.list('endpoint').items).toEqual([]);
    expect(svc.list('network').items).toEqual([]);
  });

  it('refuses deleting a network still used by an endpoint the batch keeps, naming both', async () => {
    const rev = svc.revision();
    const e = await rejects(
      svc.batch([
        { op: 'delete', kind: 'endpoint', id: 'e1' },
        { op: 'delete', kind: 'network', id: 'n1' },
      ]),
      'conflict',
      /^ops\[1\] \(network 'n1'\): network 'n1' is still used by endpoint\/e2 after the batch/,
    );
    expect(e.details).toMatchObject({ op: 1, referrers: ['endpoint/e2'] });
    expect(svc.revision()).toBe(rev);
    expect(svc.get('endpoint', 'e1').id).toBe('e1');
  });

  it('refuses re-creating a deleted network under endpoints that were not rewritten', async () => {
    await rejects(
      svc.batch([{ op: 'delete', kind: 'network', id: 'n1' }, net('n1', { subnets: ['192.168.0.0/24'] })]),
      'conflict',
      /^ops\[0\] \(network 'n1'\): network 'n1' is still used by endpoint\/e1, endpoint\/e2/,
    );
  });

  it('cascade removes dependants at that op; a later op cannot use them', async () => {
    await rejects(
      svc.batch([
        { op: 'delete', kind: 'network', id: 'n1', cascade: true },
        { op: 'replace', kind: 'endpoint', id: 'e1', body: { networkId: 'n1' } },
      ]),
      'invalid',
      /^ops\[1\] \(endpoint 'e1'\): networkId: network 'n1' does not exist/,
    );
    const r = await svc.batch([{ op: 'delete', kind: 'network', id: 'n1', cascade: true }]);
    expect(r.results[0]!.deleted).toHaveLength(3);
    expect(svc.list('endpoint').items).toEqual([]);
  });

  it('deleting a missing object is not_found naming the op', async () => {
    await rejects(
      svc.batch([{ op: 'delete', kind: 'endpoint', id: 'nope' }]),
      'not_found',
      /^ops\[0\] \(endpoint 'nope'\): endpoint 'nope' not found/,
    );
  });
});

const group = (name: string): BatchOp => ({
  op: 'replace',
  kind: 'securityGroup',
  id: 'sg',
  body: { tenantId: 't1', name, rules: [] },
});

describe('batch: an object left as it was found is not written', () => {
  beforeEach(async () => {
    await svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] });
    await svc.put('securityGroup', 'sg', { tenantId: 't1', name: 'sg', rules: [] });
  });

  it('changed and changed back: nothing committed, each op unchanged at the old revision', async () => {
    const rev = svc.revision();
    const was = svc.get('securityGroup', 'sg');
    const r = await svc.batch([group('other'), group('sg')]);
    expect(r.committed).toBe(false);
    expect(r.results.map((x) => [x.changed, x.revision])).toEqual([
      [false, was.revision],
      [false, was.revision],
    ]);
    expect(svc.revision()).toBe(rev);
    expect(svc.get('securityGroup', 'sg')).toEqual(was);
  });

  it('only the objects that end different are written', async () => {
    const was = svc.get('securityGroup', 'sg');
    const r = await svc.batch([
      group('other'),
      {
        op: 'replace',
        kind: 'network',
        id: 'n1',
        body: { tenantId: 't1', name: 'renamed', subnets: ['10.0.0.0/24'] },
      },
      group('sg'),
    ]);
    expect(r.committed).toBe(true);
    expect(r.results.map((x) => x.changed)).toEqual([false, true, false]);
    expect(svc.get('network', 'n1')).toMatchObject({ name: 'renamed', revision: r.revision });
    expect(svc.get('securityGroup', 'sg')).toEqual(was);
  });

  it('a delete and the same object again is still a delete and a create (it was asked for)', async () => {
    const r = await svc.batch([
      { op: 'delete', kind: 'securityGroup', id: 'sg' },
      { op: 'create', kind: 'securityGroup', id: 'sg', body: { tenantId: 't1', name: 'sg', rules: [] } },
    ]);
    expect(r.committed).toBe(true);
    expect(r.results.map((x) => [x.op, x.changed])).toEqual([
      ['delete', true],
      ['create', true],
    ]);
    expect(svc.get('securityGroup', 'sg').revision).toBe(r.revision);
  });
});
