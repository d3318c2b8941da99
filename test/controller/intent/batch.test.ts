import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BatchOp, MAX_BATCH_OPS } from '../../../controller/intent/batch.js';
import { IntentService } from '../../../controller/intent/service.js';
import { FileStore } from '../../../controller/store/file-store.js';
import { StoreError } from '../../../controller/store/store.js';
import { FaultyStore, openService, rejects } from './helpers.js';

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

describe('batch: tenant scope', () => {
  it('lets a tenant write its own objects and nothing else', async () => {
    await svc.put('network', 'other', { tenantId: 't2', name: 'other' });
    const t1 = { tenantScope: 't1' };
    const r = await svc.batch([{ op: 'create', kind: 'network', id: 'mine', body: { name: 'mine' } }], t1);
    expect(svc.get('network', 'mine').tenantId).toBe('t1');
    expect(r.committed).toBe(true);
    await rejects(
      svc.batch([ep('e1', 'mine', '10.1.0.1'), { op: 'delete', kind: 'network', id: 'other' }], t1),
      'not_found',
      /^ops\[1\] \(network 'other'\): network 'other' not found/,
    );
    await rejects(
      svc.batch([{ op: 'replace', kind: 'network', id: 'other', body: { name: 'x' } }], t1),
      'not_found',
    );
    await rejects(
      svc.batch([{ op: 'create', kind: 'network', body: { name: 'x', tenantId: 't2' } }], t1),
      'invalid',
      /^ops\[0\] \(network\): tenantId: tenant 't2' does not exist/,
    );
    await rejects(
      svc.batch(
        [{ op: 'create', kind: 'chassis', id: 'c1', body: { name: 'c1', tunnelIp: '192.0.2.1' } }],
        t1,
      ),
      'not_found',
      /^ops\[0\] \(chassis 'c1'\): chassis objects are not available to tenant-scoped callers/,
    );
    await rejects(svc.batch([{ op: 'delete', kind: 'tenant', id: 't1' }], t1), 'not_found');
    expect(svc.list('endpoint').items).toEqual([]);
  });
});

describe('batch: idempotency, dry run and limits', () => {
  it('replays the first result for a repeated Idempotency-Key and refuses it for other ops', async () => {
    const ops = [net('n1'), ep('e1', 'n1', '10.0.0.1')];
    const first = await svc.batch(ops, { idempotencyKey: 'k1' });
    const rev = svc.revision();
    const again = await svc.batch(ops, { idempotencyKey: 'k1' });
    expect(again).toEqual({ ...first, committed: false, replayed: true });
    expect(svc.revision()).toBe(rev);
    await rejects(
      svc.batch([net('n9')], { idempotencyKey: 'k1' }),
      'conflict',
      /^Idempotency-Key: was already used for a different request/,
    );
    await rejects(
      svc.create('tenant', { name: 'x' }, { idempotencyKey: 'k1' }),
      'conflict',
      /^Idempotency-Key: was already used/,
    );
    // Keys are per tenant, as for single creates.
    const t1 = await svc.batch([{ op: 'create', kind: 'network', id: 'n-t1', body: { name: 'x' } }], {
      idempotencyKey: 'k1',
      tenantScope: 't1',
    });
    expect(t1.replayed).toBe(false);
  });

  it('dry run validates every op, reports results and commits nothing', async () => {
    const rev = svc.revision();
    const r = await svc.batch([net('n1'), ep('e1', 'n1', '10.0.0.1')], { dryRun: true });
    expect(r).toMatchObject({ dryRun: true, committed: false, revision: rev });
    expect(r.results.map((x) => [x.id, x.created, x.revision])).toEqual([
      ['n1', true, rev + 1],
      ['e1', true, rev + 1],
    ]);
    expect(svc.revision()).toBe(rev);
    expect(svc.list('network').items).toEqual([]);
    await rejects(svc.batch([ep('e1', 'n1', '10.0.0.1')], { dryRun: true }), 'invalid', /^ops\[0\]/);
  });

  it(`refuses an empty batch and more than ${MAX_BATCH_OPS} ops with a clear error`, async () => {
    await rejects(svc.batch([]), 'invalid', /^ops: is empty/);
    // Callers outside TypeScript (or casting) still get a clear error.
    await rejects(svc.batch('nope' as never), 'invalid', /^ops: must be a list/);
    const many = Array.from({ length: MAX_BATCH_OPS + 1 }, (_, i) => ({
      op: 'create',
      kind: 'tenant',
      id: `t-${i}`,
      body: { name: 'x' },
    }));
    const e = await rejects(
      svc.batch(many as BatchOp[]),
      'invalid',
      new RegExp(`^ops: has ${MAX_BATCH_OPS + 1} operations; a batch holds at most ${MAX_BATCH_OPS}`),
    );
    expect(e.field).toBe('ops');
    expect(svc.list('tenant').items).toHaveLength(2);
  });

  it('refuses malformed operations before running any, naming op and field', async () => {
    const cases: Array<[unknown, RegExp, string]> = [
      [null, /^ops\[1\] \(\?\): must be an object/, 'ops[1]'],
      [
        { op: 'upsert', kind: 'network', id: 'x' },
        /^ops\[1\] \(network 'x'\): op: 'upsert' must be one of create, replace, delete/,
        'ops[1].op',
      ],
      [{ op: 'create', kind: 'switch', body: {} }, /unknown kind 'switch'/, 'ops[1].kind'],
      [{ op: 'create', kind: 'token', body: {} }, /tokens cannot be batched/, 'ops[1].kind'],
      [{ op: 'delete', kind: 'network', id: 'n', body: {} }, /body: a delete takes no body/, 'ops[1].body'],
      [{ op: 'create', kind: 'network' }, /body: is required for create/, 'ops[1].body'],
      [{ op: 'replace', kind: 'network', body: { name: 'x' } }, /id: is required for replace/, 'ops[1].id'],
      [{ op: 'create', kind: 'network', body: {}, extra: 1 }, /extra: is not a known field/, 'ops[1].extra'],
      [
        { op: 'create', kind: 'tenant', ifMatch: 3, body: {} },
        /If-Match: does not apply to create/,
        'ops[1].ifMatch',
      ],
      [
        { op: 'replace', kind: 'tenant', id: 'x', ifMatch: 'a', body: {} },
        /If-Match: must be a revision/,
        'ops[1].ifMatch',
      ],
      [
        { op: 'create', kind: 'tenant', cascade: true, body: {} },
        /cascade: is a boolean of delete operations only/,
        'ops[1].cascade',
      ],
      [
        { op: 'create', kind: 'tenant', id: 'bad id', body: { name: 'x' } },
        /id: 'bad id' is not a valid id/,
        'ops[1].id',
      ],
      [
        { op: 'create', kind: 'tenant', id: 'a', body: { id: 'b', name: 'x' } },
        /differs from the op's id 'a'/,
        'ops[1].id',
      ],
    ];
    for (const [op, message, field] of cases) {
      const e = await rejects(
        svc.batch([{ op: 'create', kind: 'tenant', id: 'ok', body: { name: 'ok' } }, op as BatchOp]),
        'invalid',
        message,
      );
      expect(e.field, String(message)).toBe(field);
    }
    expect(svc.list('tenant').items).toHaveLength(2);
  });

  it('refuses a bad body of every kind, naming the field inside the body', async () => {
    await svc.batch([net('n1')]);
    await svc.put('chassis', 'c1', { name: 'c1', tunnelIp: '192.0.2.1' });
    const bad: Array<[BatchOp, RegExp, string]> = [
      [{ op: 'create', kind: 'tenant', body: { name: '' } }, /name: /, 'ops[0].body.name'],
      [
        { op: 'create', kind: 'network', body: { tenantId: 't1', name: 'x', vni: 0 } },
        /vni: /,
        'ops[0].body.vni',
      ],
      [{ op: 'create', kind: 'endpoint', body: { networkId: 'n1', mac: 'zz' } }, /mac: /, 'ops[0].body.mac'],
      [
        {
          op: 'create',
          kind: 'securityGroup',
          body: { tenantId: 't1', name: 's', rules: [{ direction: 'up' }] },
        },
        /rules\[0\]/,
        'ops[0].body.rules[0]',
      ],
      [
        {
          op: 'create',
          kind: 'networkAcl',
          body: {
            networkId: 'n1',
            priority: 1,
            direction: 'ingress',
            action: 'allow',
            protocol: 'icmp',
            portMin: 80,
          },
        },
        /portMin: port ranges need protocol tcp or udp/,
        'ops[0].body.portMin',
      ],
      [
        { op: 'create', kind: 'chassis', body: { name: 'c', tunnelIp: 'not-an-ip' } },
        /tunnelIp: /,
        'ops[0].body.tunnelIp',
      ],
      [
        {
          op: 'create',
          kind: 'vlanBinding',
          body: { chassisId: 'c1', port: 'eth1', vlan: 5000, networkId: 'n1' },
        },
        /vlan: /,
        'ops[0].body.vlan',
      ],
    ];
    const rev = svc.revision();
    for (const [op, message, field] of bad) {
      const e = await rejects(svc.batch([op]), 'invalid', message);
      expect(e.field?.startsWith(field), `${op.kind}: ${e.field}`).toBe(true);
      expect(e.message).toMatch(new RegExp(`^ops\\[0\\] \\(${op.kind}\\): `));
    }
    expect(svc.revision()).toBe(rev);
  });
});

describe('batch: store failures', () => {
  it('a commit the store refuses leaves nothing behind, and the same batch succeeds after', async () => {
    const faulty = new FaultyStore(h.store);
    const other = await IntentService.open(faulty);
    try {
      faulty.failNext = 1;
      faulty.failWith = () => new StoreError('unavailable', 'disk on fire');
      const ops = [net('n1'), ep('e1', 'n1', '10.0.0.1')];
      await rejects(other.batch(ops), 'unavailable', /disk on fire/);
      expect(() => other.get('network', 'n1')).toThrow(/not found/);
      const r = await other.batch(ops);
      expect(r.committed).toBe(true);
      expect(other.get('endpoint', 'e1').revision).toBe(r.revision);
    } finally {
      await other.close();
    }
  });
});

describe('batch: scale and durability', () => {
  it('creates 1,000 endpoints in one batch, durably, and keeps serving single writes after', async () => {
    const ops: BatchOp[] = [
      net('big', { subnets: ['10.8.0.0/16'] }),
      ...Array.from({ length: 1000 }, (_, i) => ep(`ep-${i}`, 'big', `10.8.${i >> 8}.${i & 255}`)),
    ];
    const r = await svc.batch(ops);
    expect(r.results).toHaveLength(1001);
    expect(new Set(r.results.map((x) => x.revision))).toEqual(new Set([r.revision]));
    expect(svc.list('endpoint', { limit: 2000 }).items).toHaveLength(1000);
    const macs = new Set(svc.list('endpoint', { limit: 2000 }).items.map((e) => e.mac));
    expect(macs.size).toBe(1000);
    const single = await svc.create('endpoint', { networkId: 'big', ips: ['10.8.200.1'] });
    expect(single.revision).toBe(r.revision + 1);
    // Everything is in the store: a fresh service over a reopened store sees the batch.
    await svc.close();
    await h.store.close();
    const store = await FileStore.open(h.dir);
    const again = await IntentService.open(store);
    expect(again.list('endpoint', { limit: 2000 }).items).toHaveLength(1001);
    expect(again.get('endpoint', 'ep-999').revision).toBe(r.revision);
    await again.close();
    await store.close();
  });
});
