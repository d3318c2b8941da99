import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { IntentService } from '../../../controller/intent/service.js';
import { StoreError } from '../../../controller/store/store.js';
import { FaultyStore, openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
afterEach(() => h.close());

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await sleep(5);
  expect(cond()).toBe(true);
};

describe('two controllers on one store', () => {
  it("see each other's writes through the change feed", async () => {
    h = await openService();
    const b = await IntentService.open(h.store);
    await h.svc.put('tenant', 't', { name: 't' });
    await until(() => b.revision() === 1);
    expect(b.get('tenant', 't').name).toBe('t');
    await b.put('network', 'n', { tenantId: 't', name: 'n', vni: 7 });
    await until(() => h.svc.revision() === 2);
    expect(h.svc.get('network', 'n').vni).toBe(7);
    await b.close();
  });

  it('never both win a unique value: the loser retries on the new state and gets a conflict', async () => {
    h = await openService();
    const b = await IntentService.open(h.store);
    await h.svc.put('tenant', 't', { name: 't' });
    await until(() => b.revision() === 1);
    const results = await Promise.allSettled([
      h.svc.create('network', { tenantId: 't', name: 'a', vni: 42 }),
      b.create('network', { tenantId: 't', name: 'b', vni: 42 }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(lost.reason.message).toMatch(/^vni: 42 is already used/);
    await until(() => b.revision() === 2 && h.svc.revision() === 2);
    await b.close();
  });

  it('allocate distinct VNIs from the same range under contention', async () => {
    h = await openService();
    const b = await IntentService.open(h.store);
    await h.svc.put('tenant', 't', { name: 't' });
    await until(() => b.revision() === 1);
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? b : h.svc).create('network', { tenantId: 't', name: `n${i}` }),
      ),
    );
    expect(new Set(made.map((m) => m.object.vni)).size).toBe(20);
    expect(new Set(made.map((m) => m.revision)).size).toBe(20);
    await b.close();
  });
});

describe('store failures', () => {
  it('fail the writes of the batch with unavailable, leave nothing half-applied, and recover', async () => {
    h = await openService();
    const faulty = new FaultyStore(h.store);
    const svc = await IntentService.open(faulty);
    await svc.put('tenant', 't', { name: 't' });
    faulty.failNext = 1;
    faulty.failWith = () =>
      new StoreError('unavailable', 'Redis at redis://x:1 unavailable during commit: connection refused');
    const [a, b] = await Promise.allSettled([
      svc.put('network', 'n', { tenantId: 't', name: 'n', vni: 9 }),
      svc.create('endpoint', { networkId: 'n' }),
    ]);
    expect(a.status).toBe('rejected');
    expect((a as PromiseRejectedResult).reason).toMatchObject({ code: 'unavailable' });
    expect((a as PromiseRejectedResult).reason.message).toMatch(
      /unavailable: Redis at redis:\/\/x:1 unavailable during commit/,
    );
    expect((b as PromiseRejectedResult).reason).toMatchObject({ code: 'unavailable' });
    await rejects(() => svc.get('network', 'n'), 'not_found');
    // The VNI and everything else the failed batch claimed are free again.
    const n = await svc.put('network', 'n', { tenantId: 't', name: 'n', vni: 9 });
    expect(n.revision).toBe(2);
    await svc.close();
  });

  it('retry a batch that lost a race with another writer (conflict) without the caller noticing', async () => {
    h = await openService();
    const faulty = new FaultyStore(h.store);
    const svc = await IntentService.open(faulty);
    await svc.put('tenant', 't', { name: 't' });
    // Another controller writes just before our commit reaches the store: our base is stale.
    const other = { id: 'other', name: 'o', revision: 2, createdAt: 'x', updatedAt: 'x' };
    faulty.beforeNextCommit = () =>
      h.store.commit({ txs: [{ ops: [{ type: 'put', key: 'tenant/other', value: other }] }] });
    const r = await svc.put('network', 'n', { tenantId: 't', name: 'n' });
    expect(r.revision).toBe(3);
    expect(faulty.commits).toBe(3);
    expect(svc.get('tenant', 'other')).toEqual(other);
    await svc.close();
  });
});
