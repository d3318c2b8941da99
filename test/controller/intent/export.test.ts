import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import { EXPORT_ORDER } from '../../../controller/intent/export.js';
import { type AnyObject, SCHEMAS } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { seedEverything } from './export-fixture.js';
import { openService, rejects } from './helpers.js';

type Opened = Awaited<ReturnType<typeof openService>>;
let opened: Opened[] = [];
const service = async (): Promise<IntentService> => {
  const o = await openService();
  opened.push(o);
  return o.svc;
};
afterEach(async () => {
  await Promise.all(opened.map((o) => o.close()));
  opened = [];
});

const withoutMeta = ({ revision: _r, createdAt: _c, updatedAt: _u, ...rest }: AnyObject) => rest;
/** Every object of every exportable kind, without revisions and timestamps. */
const objects = (svc: IntentService) =>
  Object.fromEntries(
    EXPORT_ORDER.map((k) => [
      k,
      svc.list(k, { limit: 10_000 }).items.map((o) => withoutMeta(o as AnyObject)),
    ]),
  );
const where = (ops: BatchOp[], kind: string, id: string) =>
  ops.findIndex((o) => o.kind === kind && o.id === id);

describe('export: the intent as the batch that recreates it', () => {
  let a: IntentService;
  beforeEach(async () => {
    a = await service();
    await seedEverything(a);
  });

  it('rebuilds an empty controller with the same objects, and exports the same again', async () => {
    const { ops, revision } = a.export();
    expect(revision).toBe(a.revision());
    const b = await service();
    const result = await b.batch(ops);
    expect(result.committed).toBe(true);
    expect(objects(b)).toEqual(objects(a));
    expect(b.export().ops).toEqual(ops);
    // Generated values came across as they were, not generated again.
    expect(b.get('endpoint', 'vm').mac).toBe(a.get('endpoint', 'vm').mac);
    expect(b.get('mirror', 'tap').vni).toBe(a.get('mirror', 'tap').vni);
    expect(b.get('router', 'r1').interfaces[1]).toEqual(a.get('router', 'r1').interfaces[1]);
    expect(b.get('securityGroup', 'z').log).toBe('denied');
    expect(b.list('token').items).toEqual([]);
  });

  it('changes nothing when applied back to the controller it came from', async () => {
    const before = a.revision();
    const result = await a.batch(a.export().ops);
    expect(result.committed).toBe(false);
    expect(result.results.every((r) => !r.changed && !r.created)).toBe(true);
    expect(a.revision()).toBe(before);
  });

  it("gives each object what its kind's PUT takes: no id, meta fields or read-only parts", () => {
    for (const op of a.export().ops) {
      expect(op.op).toBe('replace');
      const schema = SCHEMAS[op.kind].create;
      expect(
        Value.Check(schema, op.body),
        `${op.kind} ${op.id}: ${[...Value.Errors(schema, op.body)][0]?.message}`,
      ).toBe(true);
      for (const k of ['id', 'revision', 'createdAt', 'updatedAt']) expect(op.body).not.toHaveProperty(k);
    }
    const r1 = a.export().ops.find((o) => o.kind === 'router')!;
    expect((r1.body!.interfaces as object[]).every((i) => !('mac' in i))).toBe(true);
  });

  it('orders kinds by what they refer to; a cycle of security groups is written twice', () => {
    const ops = a.export().ops;
    const kinds = ops.map((o) => o.kind);
    expect([...new Set(kinds)]).toEqual(EXPORT_ORDER);
    expect(where(ops, 'router', 'r1')).toBeGreaterThan(where(ops, 'endpoint', 'fw'));
    expect(where(ops, 'mirror', 'tap')).toBeGreaterThan(where(ops, 'endpoint', 'ids'));
    const groups = ops.filter((o) => o.kind === 'securityGroup');
    // a (first by id) is reached first; z, naming a, is written before it without that rule.
    expect(groups.map((g) => g.id)).toEqual(['z', 'a', 'z']);
    const ruleTo = (op: BatchOp) =>
      (op.body!.rules as { remoteGroupId?: string }[]).map((r) => r.remoteGroupId);
    expect(ruleTo(groups[0]!)).toEqual([undefined]);
    expect(ruleTo(groups[1]!)).toEqual(['z', 'a']);
    expect(groups[2]!.body).toEqual(
      a
        .export()
        .ops.filter((o) => o.id === 'z')
        .at(-1)!.body,
    );
    expect(ruleTo(groups[2]!)).toEqual(['a', undefined]);
  });

  it("an admin's export of one tenant: the tenant, its objects, its VLAN bindings, no chassis", async () => {
    const ops = a.export({ tenant: 'red' }).ops;
    expect(ops.filter((o) => o.kind === 'tenant').map((o) => o.id)).toEqual(['red']);
    expect(ops.some((o) => o.kind === 'chassis' || o.id === 'bnet' || o.id === 'bvm')).toBe(false);
    expect(where(ops, 'vlanBinding', 'metal')).toBeGreaterThan(-1);
    // Where the chassis it names is missing, the batch says so, naming the op.
    const b = await service();
    await rejects(
      b.batch(ops),
      'invalid',
      /^ops\[\d+\] \(vlanBinding 'metal'\): chassisId: chassis 'hv1' does not exist$/,
    );
    expect(b.revision()).toBe(0);
    await b.put('chassis', 'hv1', { name: 'hv1', tunnelIp: '192.168.90.1', offload: 'asap2' });
    expect((await b.batch(ops)).committed).toBe(true);
    expect(b.export({ tenant: 'red' }).ops).toEqual(ops);
    expect(b.list('network').items.map((n) => n.id)).toEqual(['db', 'ext', 'web']);
  });

  it("a tenant token's export: only what it may write (no tenant, chassis or VLAN binding)", () => {
    const ops = a.export({ tenantScope: 'red' }).ops;
    expect(new Set(ops.map((o) => o.kind))).toEqual(
      new Set(['network', 'securityGroup', 'networkAcl', 'endpoint', 'router', 'mirror']),
    );
    expect(ops.every((o) => o.body!.tenantId === 'red' || o.kind === 'endpoint')).toBe(true);
    expect(a.export({ tenantScope: 'blue' }).ops.map((o) => o.id)).toEqual(['bnet', 'bvm']);
  });

  it('refuses a tenant that does not exist or is not the caller’s, naming it', async () => {
    await rejects(() => a.export({ tenant: 'green' }), 'not_found', /tenant 'green'/);
    await rejects(() => a.export({ tenantScope: 'blue', tenant: 'red' }), 'not_found', /tenant 'red'/);
    await rejects(() => a.export({ tenantScope: 'gone' }), 'not_found', /tenant 'gone'/);
  });
});

it('an empty intent exports no op', async () => {
  expect((await service()).export()).toEqual({ revision: 0, ops: [] });
});

it('any graph of security groups naming each other round-trips through one batch', async () => {
  const graph = fc.array(fc.array(fc.nat(4), { maxLength: 3 }), { minLength: 1, maxLength: 5 });
  await fc.assert(
    fc.asyncProperty(graph, async (edges) => {
      const src = await service();
      await src.put('tenant', 't', { name: 't' });
      const ids = edges.map((_, i) => `g${i}`);
      for (const id of ids) await src.put('securityGroup', id, { tenantId: 't', name: id, rules: [] });
      for (const [i, to] of edges.entries()) {
        const rules = to
          .filter((n) => n < ids.length)
          .map((n) => ({
            direction: 'ingress' as const,
            ethertype: 'ipv4' as const,
            protocol: 'any' as const,
            remoteGroupId: ids[n]!,
          }));
        await src.put('securityGroup', ids[i]!, { tenantId: 't', name: ids[i]!, rules });
      }
      const dst = await service();
      await dst.batch(src.export().ops);
      expect(objects(dst)).toEqual(objects(src));
    }),
    { numRuns: 25 },
  );
});
