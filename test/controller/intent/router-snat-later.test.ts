import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import { rejects } from './helpers.js';
import { interfaces, put, snatWorldEachTest, svc } from './router-snat-fixture.js';

/**
 * SNAT (many-to-one source NAT) kept valid by later writes to other objects (subnets, endpoints,
 * allowed addresses, batches). The world: router-snat-fixture.ts.
 */

snatWorldEachTest();

describe('SNAT: later writes to other objects keep it valid', () => {
  it('refuses new subnets leaving the SNAT address outside or unusable, naming the router', async () => {
    await put({ ip: '10.3.0.200' });
    const ext = svc.get('network', 'ext');
    const e = await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/25'] }),
      'invalid',
      /^subnets: 10\.3\.0\.200, the SNAT address of router 'r1', would be outside the IPv4 subnets \(10\.3\.0\.0\/25\); change the router's snat first$/,
    );
    expect(e.field).toBe('subnets');
    await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/25', '10.3.0.200/30'] }),
      'invalid',
      /^subnets: 10\.3\.0\.200, the SNAT address of router 'r1', would be the network address of 10\.3\.0\.200\/30; change the router's snat first$/,
    );
    expect(svc.get('network', 'ext')).toEqual(ext);
    // Another network of the router is not held to it; keeping the address usable is fine.
    expect((await svc.update('network', 'web', { subnets: ['10.0.0.0/25'] })).object.subnets).toEqual([
      '10.0.0.0/25',
    ]);
    const wider = await svc.update('network', 'ext', { subnets: ['10.3.0.0/24', '10.9.0.0/24'] });
    expect(wider.object.subnets).toEqual(['10.3.0.0/24', '10.9.0.0/24']);
  });

  it('refuses an endpoint taking the SNAT address (create or update); free again once SNAT is off', async () => {
    await put({ ip: '10.3.0.200' });
    const message = /^ips\[0\]: 10\.3\.0\.200 is the SNAT address of router 'r1' on network 'ext'$/;
    const e = await rejects(
      svc.put('endpoint', 'thief', { networkId: 'ext', ips: ['10.3.0.200'] }),
      'conflict',
      message,
    );
    expect(e.field).toBe('ips[0]');
    expect(svc.find('endpoint', 'thief')).toBeUndefined();
    await svc.put('endpoint', 'other', { networkId: 'ext', ips: ['10.3.0.201'] });
    await rejects(svc.update('endpoint', 'other', { ips: ['10.3.0.200'] }), 'conflict', message);
    expect(svc.get('endpoint', 'other').ips).toEqual(['10.3.0.201']);
    await svc.update('router', 'r1', { snat: false });
    expect((await svc.update('endpoint', 'other', { ips: ['10.3.0.200'] })).object.ips).toEqual([
      '10.3.0.200',
    ]);
  });

  it('refuses the SNAT address as an exact allowed address; a prefix holding it is fine', async () => {
    await put({ ip: '10.3.0.200' });
    const e = await rejects(
      svc.put('endpoint', 'ka', {
        networkId: 'ext',
        ips: ['10.3.0.10'],
        allowedAddresses: ['10.3.0.200/32'],
      }),
      'conflict',
      /^allowedAddresses\[0\]: 10\.3\.0\.200 is the SNAT address of router 'r1' on network 'ext'; the answers to it are the router's$/,
    );
    expect(e.field).toBe('allowedAddresses[0]');
    expect(svc.find('endpoint', 'ka')).toBeUndefined();
    const { object } = await svc.put('endpoint', 'ka', {
      networkId: 'ext',
      ips: ['10.3.0.10'],
      allowedAddresses: ['10.3.0.0/24'],
    });
    expect(object.allowedAddresses).toEqual(['10.3.0.0/24']);
  });

  it("names the router's own address when SNAT shares it (refused as the gateway, not as SNAT)", async () => {
    await put({ ip: '10.3.0.1' });
    await rejects(
      svc.put('endpoint', 'thief', { networkId: 'ext', ips: ['10.3.0.1'] }),
      'conflict',
      /^ips\[0\]: 10\.3\.0\.1 is the address of router 'r1' on network 'ext'$/,
    );
    await rejects(
      svc.put('endpoint', 'ka', { networkId: 'ext', ips: ['10.3.0.10'], allowedAddresses: ['10.3.0.1'] }),
      'conflict',
      /^allowedAddresses\[0\]: 10\.3\.0\.1 is the address of router 'r1' on network 'ext'$/,
    );
  });

  it('refuses an endpoint taking the SNAT address later in the same batch; nothing is written', async () => {
    const router: BatchOp = {
      op: 'replace',
      kind: 'router',
      id: 'r1',
      body: { tenantId: 'red', interfaces, snat: { ip: '10.3.0.200' } },
    };
    const e = await rejects(
      svc.batch([
        router,
        { op: 'create', kind: 'endpoint', id: 'thief', body: { networkId: 'ext', ips: ['10.3.0.200'] } },
      ]),
      'conflict',
      /^ops\[1\] \(endpoint 'thief'\): ips\[0\]: 10\.3\.0\.200 is the SNAT address of router 'r1' on network 'ext'$/,
    );
    expect(e.field).toBe('ops[1].body.ips[0]');
    expect(svc.find('router', 'r1')).toBeUndefined();
    expect(svc.find('endpoint', 'thief')).toBeUndefined();
  });
});
