import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
  await svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] });
  await svc.put('securityGroup', 'sg', { tenantId: 't1', name: 'sg', rules: [] });
});
afterEach(() => h.close());

const group = (name: string): BatchOp => ({
  op: 'replace',
  kind: 'securityGroup',
  id: 'sg',
  body: { tenantId: 't1', name, rules: [] },
});

describe('batch: an object left as it was found is not written', () => {
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
