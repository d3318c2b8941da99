import { afterEach, describe, expect, it } from 'vitest';
import { IntentService } from '../../../controller/intent/service.js';
import { GatedStore, openService } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
afterEach(() => h.close());

const tick = () => new Promise((r) => setTimeout(r, 1));

async function setup() {
  h = await openService();
  const gated = new GatedStore(h.store);
  const svc = await IntentService.open(gated);
  const t = svc.put('tenant', 't', { name: 't' });
  await gated.waitHeld(1);
  gated.held.shift()!.release();
  await t;
  gated.commits = 0;
  return { svc, gated };
}

describe('pipelined batches', () => {
  it('form a new batch while earlier ones are in flight, chained by the writer key', async () => {
    const { svc, gated } = await setup();
    const a = svc.put('network', 'a', { tenantId: 't', name: 'a' });
    await gated.waitHeld(1);
    const b = svc.put('endpoint', 'e1', { networkId: 'a' }); // sees 'a' although not yet committed
    await gated.waitHeld(2);
    const c = [
      svc.put('network', 'c', { tenantId: 't', name: 'c' }),
      svc.put('network', 'd', { tenantId: 't', name: 'd' }),
    ];
    await gated.waitHeld(3);
    expect(gated.held.map((x) => x.req.txs.length)).toEqual([1, 1, 2]);
    expect(gated.held.map((x) => x.req.baseRevision)).toEqual([1, 2, 3]);
    expect(gated.held[0]!.req.txs[0]!.expect).toBeUndefined();
    const writerKey = Object.keys(gated.held[1]!.req.txs[0]!.expect!)[0]!;
    expect(writerKey).toMatch(/^meta\/writer\//);
    expect(gated.held[2]!.req.txs[0]!.expect).toEqual({ [writerKey]: 3 });
    // Reads never show writes still in flight.
    expect(() => svc.get('network', 'a')).toThrow(/not found/);
    for (const x of gated.held.splice(0)) x.release();
    expect((await a).revision).toBe(2);
    expect((await b).revision).toBe(3);
    expect((await Promise.all(c)).map((r) => r.revision)).toEqual([4, 5]);
    expect(svc.revision()).toBe(5);
    expect(svc.get('endpoint', 'e1').networkId).toBe('a');
    await svc.close();
  });

  it('when a batch fails, later batches that built on it are re-validated, independent ones retried', async () => {
    const { svc, gated } = await setup();
    const net = svc.put('network', 'a', { tenantId: 't', name: 'a' });
    await gated.waitHeld(1);
    const ep = svc.put('endpoint', 'e1', { networkId: 'a' });
    const other = svc.put('tenant', 'u', { name: 'u' });
    await gated.waitHeld(2);
    gated.held[0]!.release('reject');
    gated.held[1]!.release();
    await expect(net).rejects.toMatchObject({ code: 'unavailable' });
    // The retried batch re-runs on the real state: the network never existed.
    await gated.waitHeld(3);
    gated.held[2]!.release();
    await expect(ep).rejects.toMatchObject({ code: 'invalid', field: 'networkId' });
    expect((await other).revision).toBe(2);
    expect(svc.revision()).toBe(2);
    await svc.close();
  });

  it('never commits a batch on top of a failed one, even if another writer fills the same revisions', async () => {
    const { svc, gated } = await setup();
    const net = svc.put('network', 'a', { tenantId: 't', name: 'a' });
    await gated.waitHeld(1);
    const ep = svc.put('endpoint', 'e1', { networkId: 'a' });
    await gated.waitHeld(2);
    // Batch 1 is not applied, but another controller commits exactly one transaction meanwhile:
    // the store is at the revision batch 2 was planned on. Only the writer-key chain stops it.
    gated.held[0]!.release(async () => {
      await h.store.commit({
        txs: [
          {
            ops: [
              {
                type: 'put',
                key: 'tenant/x',
                value: { id: 'x', name: 'x', revision: 2, createdAt: 'z', updatedAt: 'z' },
              },
            ],
          },
        ],
      });
      throw new (await import('../../../controller/store/store.js')).StoreError('unavailable', 'lost');
    });
    gated.held[1]!.release();
    await expect(net).rejects.toMatchObject({ code: 'unavailable' });
    // Re-validated on the caught-up state, the endpoint fails before reaching the store again.
    await expect(ep).rejects.toMatchObject({ code: 'invalid', field: 'networkId' });
    expect(gated.held).toHaveLength(2);
    expect((await h.store.snapshot()).entries.some((e) => e.key === 'endpoint/e1')).toBe(false);
    expect(svc.get('tenant', 'x').name).toBe('x');
    await svc.close();
  });

  it('a lost reply: the write is reported unavailable, but the state catches up with what committed', async () => {
    const { svc, gated } = await setup();
    const net = svc.put('network', 'a', { tenantId: 't', name: 'a' });
    await gated.waitHeld(1);
    const ep = svc.put('endpoint', 'e1', { networkId: 'a' });
    await gated.waitHeld(2);
    gated.held[0]!.release('forward-then-reject');
    gated.held[1]!.release();
    await expect(net).rejects.toMatchObject({ code: 'unavailable' });
    expect((await ep).revision).toBe(3);
    expect(svc.revision()).toBe(3);
    expect(svc.get('network', 'a').name).toBe('a');
    for (let i = 0; i < 3; i++) await tick();
    // A retry of the create finds it there (and with an Idempotency-Key would replay it).
    await expect(svc.create('network', { id: 'a', tenantId: 't', name: 'a' })).rejects.toMatchObject({
      code: 'conflict',
    });
    await svc.close();
  });
});
