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
