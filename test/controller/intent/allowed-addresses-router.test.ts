import { beforeEach, describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { allowedFixture } from './allowed-fixture.js';
import { rejects } from './helpers.js';

/** Allowed addresses against router interfaces, and within batches (allowed-addresses.test.ts: the rest). */

const f = allowedFixture();
const { ep, refused } = f;
let svc: IntentService;
beforeEach(() => {
  svc = f.service();
});

describe('allowed addresses and the router', () => {
  it("refuses the router's IPv4 or IPv6 address on the network as an allowed address", async () => {
    await svc.put('router', 'r1', { tenantId: 't1', interfaces: [{ networkId: 'n1' }] });
    expect(svc.get('router', 'r1').interfaces[0]).toMatchObject({ ip: '10.0.0.1', ipv6: 'fd00:1::1' });
    const cases: Array<[string, RegExp]> = [
      ['10.0.0.1', /10\.0\.0\.1 is the address of router 'r1' on network 'n1'$/],
      ['10.0.0.1/32', /10\.0\.0\.1 is the address of router 'r1' on network 'n1'$/],
      ['fd00:1::1', /fd00:1::1 is the address of router 'r1' on network 'n1'$/],
      ['fd00:1::1/128', /fd00:1::1 is the address of router 'r1' on network 'n1'$/],
    ];
    for (const [value, why] of cases) {
      await refused(
        () => ep('vm1', { allowedAddresses: ['10.0.0.100', value] }),
        'conflict',
        new RegExp(`^allowedAddresses\\[1\\]: ${why.source}`),
        'allowedAddresses[1]',
      );
    }
    // Beside it is fine, and so is a prefix holding it (a NAT VM: the router's flows drop a VM
    // speaking as it); the router of another network is not this one's.
    const ok = await ep('vm1', { allowedAddresses: ['10.0.0.128/25', 'fd00:1::100', '10.0.0.2'] });
    expect(ok.object.allowedAddresses).toEqual(['10.0.0.128/25', 'fd00:1::100', '10.0.0.2']);
    const nat = await ep('nat', { allowedAddresses: ['0.0.0.0/0', '::/0', '10.0.0.0/24'] });
    expect(nat.object.allowedAddresses).toEqual(['0.0.0.0/0', '::/0', '10.0.0.0/24']);
    expect((await ep('x1', { networkId: 'n2', allowedAddresses: ['10.0.0.0/24'] })).object.networkId).toBe(
      'n2',
    );
  });

  it('refuses a router interface (given or default, IPv4 or IPv6) on a VIP an endpoint allows', async () => {
    await ep('vm1', { allowedAddresses: ['10.0.0.1', '10.0.0.9', '10.0.0.0/28'] });
    await refused(
      () => svc.put('router', 'r1', { tenantId: 't1', interfaces: [{ networkId: 'n1' }] }),
      'conflict',
      /^interfaces\[0\]\.ip: 10\.0\.0\.1 \(the default: the first host address of 10\.0\.0\.0\/24\) is an allowed address \(a VIP\) of endpoint 'vm1' in network 'n1'; give interfaces\[0\]\.ip$/,
      'interfaces[0].ip',
    );
    await refused(
      () => svc.put('router', 'r1', { tenantId: 't1', interfaces: [{ networkId: 'n1', ip: '10.0.0.9' }] }),
      'conflict',
      /^interfaces\[0\]\.ip: 10\.0\.0\.9 is an allowed address \(a VIP\) of endpoint 'vm1' in network 'n1'$/,
      'interfaces[0].ip',
    );
    await ep('vm2', { allowedAddresses: ['fd00:1::1'] });
    await refused(
      () => svc.put('router', 'r1', { tenantId: 't1', interfaces: [{ networkId: 'n1', ip: '10.0.0.254' }] }),
      'conflict',
      /^interfaces\[0\]\.ipv6: fd00:1::1 is an allowed address \(a VIP\) of endpoint 'vm2' in network 'n1'$/,
      'interfaces[0].ipv6',
    );
    // A router already elsewhere, patched to join n1: refused the same way, kept as it was.
    await svc.put('router', 'r1', { tenantId: 't1', interfaces: [{ networkId: 'n2' }] });
    await refused(
      () => svc.update('router', 'r1', { interfaces: [{ networkId: 'n2' }, { networkId: 'n1' }] }),
      'conflict',
      /^interfaces\[1\]\.ip: 10\.0\.0\.1 \(the default: .*\) is an allowed address \(a VIP\) of endpoint 'vm1'/,
      'interfaces[1].ip',
    );
    expect(svc.get('router', 'r1').interfaces.map((i) => i.networkId)).toEqual(['n2']);
    // Elsewhere in the subnet, without the allowed IPv6 address: fine.
    const r = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'n2' }, { networkId: 'n1', ip: '10.0.0.254', ipv6: 'fd00:1::fe' }],
    });
    expect(r.object.interfaces[1]).toMatchObject({ ip: '10.0.0.254', ipv6: 'fd00:1::fe' });
    // Once the endpoints let go, the default is free again.
    await svc.delete('endpoint', 'vm1');
    await svc.update('endpoint', 'vm2', { allowedAddresses: [] });
    const moved = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'n2' }, { networkId: 'n1', ip: '10.0.0.1', ipv6: 'fd00:1::1' }],
    });
    expect(moved.object.interfaces[1]).toMatchObject({ ip: '10.0.0.1', ipv6: 'fd00:1::1' });
  });
});

describe('allowed addresses in a batch', () => {
  const create = (id: string, body: Record<string, unknown>): BatchOp => ({
    op: 'create',
    kind: 'endpoint',
    id,
    body: { networkId: 'n1', ...body },
  });

  it('sees the VIP an earlier op allowed, either way round; nothing is written', async () => {
    const revision = svc.revision();
    const a = await rejects(
      svc.batch([
        create('vm1', { allowedAddresses: ['10.0.0.100'] }),
        create('vm2', { ips: ['10.0.0.100'] }),
      ]),
      'conflict',
      /^ops\[1\] \(endpoint 'vm2'\): ips\[0\]: 10\.0\.0\.100 is an allowed address \(a VIP\) of endpoint 'vm1' in network 'n1'/,
    );
    expect(a.field).toBe('ops[1].body.ips[0]');
    const b = await rejects(
      svc.batch([
        create('vm2', { ips: ['10.0.0.100'] }),
        create('vm1', { allowedAddresses: ['10.0.0.100/32'] }),
      ]),
      'conflict',
      /^ops\[1\] \(endpoint 'vm1'\): allowedAddresses\[0\]: 10\.0\.0\.100 is an address of another endpoint of network 'n1' \('vm2'\)/,
    );
    expect(b.field).toBe('ops[1].body.allowedAddresses[0]');
    const c = await rejects(
      svc.batch([
        create('vm1', { allowedAddresses: ['10.0.0.1'] }),
        {
          op: 'create',
          kind: 'router',
          id: 'r1',
          body: { tenantId: 't1', interfaces: [{ networkId: 'n1' }] },
        },
      ]),
      'conflict',
      /^ops\[1\] \(router 'r1'\): interfaces\[0\]\.ip: 10\.0\.0\.1 .*is an allowed address \(a VIP\) of endpoint 'vm1'/,
    );
    expect(c.field).toBe('ops[1].body.interfaces[0].ip');
    expect(svc.revision()).toBe(revision);
    expect(svc.list('endpoint').items).toEqual([]);
    expect(svc.list('router').items).toEqual([]);
  });

  it('shares a VIP between endpoints of one batch, and frees it for a later op once deleted', async () => {
    const r = await svc.batch([
      create('vm1', { ips: ['10.0.0.11'], allowedAddresses: ['10.0.0.100'] }),
      create('vm2', { ips: ['10.0.0.12'], allowedAddresses: ['10.0.0.100'] }),
    ]);
    expect(r.committed).toBe(true);
    expect(svc.get('endpoint', 'vm2').allowedAddresses).toEqual(['10.0.0.100']);
    await svc.batch([
      { op: 'delete', kind: 'endpoint', id: 'vm1' },
      { op: 'delete', kind: 'endpoint', id: 'vm2' },
      create('vm3', { ips: ['10.0.0.100'] }),
    ]);
    expect(svc.get('endpoint', 'vm3').ips).toEqual(['10.0.0.100']);
    expect(() => svc.get('endpoint', 'vm1')).toThrow(/not found/);
  });
});
