import { beforeEach, describe, expect, it } from 'vitest';
import { randomMac } from '../../../controller/intent/access.js';
import { buildObject, type RuleEnv } from '../../../controller/intent/rules.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { IntentState } from '../../../controller/intent/state.js';
import { rejects } from './helpers.js';
import { r1, redBlueEachTest } from './router-fixture.js';

/** What routers ask of the objects around them: endpoints' addresses and MACs, networks' subnets. */

let svc: IntentService;
redBlueEachTest((s) => {
  svc = s;
});

describe('router and endpoints', () => {
  it("refuses a router address an endpoint holds (409 naming it), and an endpoint taking the router's", async () => {
    await svc.put('endpoint', 'e5', { networkId: 'web', ips: ['10.0.0.5'] });
    await rejects(
      svc.put('router', 'r1', { ...r1, interfaces: [{ networkId: 'web', ip: '10.0.0.5' }] }),
      'conflict',
      /^interfaces\[0\]\.ip: 10\.0\.0\.5 is already used by endpoint 'e5' in network 'web'/,
    );
    await svc.put('router', 'r1', r1);
    await rejects(
      svc.put('endpoint', 'e1', { networkId: 'web', ips: ['10.0.0.7', '10.0.0.1'] }),
      'conflict',
      /^ips\[1\]: 10\.0\.0\.1 is the address of router 'r1' on network 'web'/,
    );
    await rejects(
      svc.update('endpoint', 'e5', { ips: ['10.0.0.1'] }),
      'conflict',
      /^ips\[0\]: 10\.0\.0\.1 is the address of router 'r1'/,
    );
    // The same address on another network (another tenant's) is not the router's.
    await svc.put('endpoint', 'b1', { networkId: 'bnet', ips: ['10.0.0.1'] });
    // Moved off the network, the router's old address is free for endpoints.
    await svc.update('router', 'r1', { interfaces: [] });
    await svc.put('endpoint', 'e1', { networkId: 'web', ips: ['10.0.0.1'] });
  });

  it("refuses endpoint MACs with the routers' prefix, in any case", async () => {
    await rejects(
      svc.put('endpoint', 'e1', { networkId: 'web', mac: '0A:57:72:00:10:01' }),
      'invalid',
      /^mac: 0a:57:72:00:10:01: the prefix 0a:57:72 is reserved for weft's router interfaces/,
    );
    await svc.put('endpoint', 'e1', { networkId: 'web', mac: '0a:57:73:00:00:01' });
    await rejects(svc.update('endpoint', 'e1', { mac: '0a:57:72:ff:ff:ff' }), 'invalid', /^mac: .*reserved/);
  });
});

describe('router and its networks', () => {
  beforeEach(async () => {
    await svc.put('router', 'r1', {
      ...r1,
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1' },
        { networkId: 'db', ip: '10.0.1.1' },
      ],
    });
  });

  it('refuses a subnet change that strands the router address, naming subnets and the router', async () => {
    await rejects(
      svc.update('network', 'web', { subnets: ['10.5.0.0/24'] }),
      'invalid',
      /^subnets: router 'r1' has its interface 10\.0\.0\.1 on this network, which would be outside the IPv4 subnets \(10\.5\.0\.0\/24\)/,
    );
    await rejects(
      svc.put('network', 'web', { tenantId: 'red', name: 'web', subnets: ['fd00::/64'] }),
      'invalid',
      /^subnets: router 'r1' .*outside the IPv4 subnets \(none\)/,
    );
    const narrower = await svc.update('network', 'web', { subnets: ['10.0.0.0/25'] });
    expect(narrower.object.subnets).toEqual(['10.0.0.0/25']);
  });

  it("refuses a subnet that would make the router address the subnet's broadcast address", async () => {
    await svc.update('router', 'r1', {
      interfaces: [
        { networkId: 'web', ip: '10.0.0.127' },
        { networkId: 'db', ip: '10.0.1.1' },
      ],
    });
    await rejects(
      svc.update('network', 'web', { subnets: ['10.0.0.0/25'] }),
      'invalid',
      /^subnets: router 'r1' has its interface 10\.0\.0\.127 on this network, which would be the broadcast address of 10\.0\.0\.0\/25/,
    );
  });

  it("refuses a subnet overlapping another of the router's networks, naming it and the router", async () => {
    await rejects(
      svc.update('network', 'db', { subnets: ['10.0.1.0/24', '10.0.0.128/25'] }),
      'invalid',
      /^subnets: 10\.0\.0\.128\/25 overlaps 10\.0\.0\.0\/24 of network 'web', also on router 'r1'/,
    );
    // A network on no router may overlap as it likes.
    await svc.update('network', 'app', { subnets: ['10.0.0.0/16'] });
  });

  it('keeps the VNI (and so the router MAC) fixed: a PUT changing it is refused', async () => {
    await rejects(
      svc.put('network', 'web', { tenantId: 'red', name: 'web', vni: 5000, subnets: ['10.0.0.0/24'] }),
      'invalid',
      /^vni: cannot change from '4097' to '5000'/,
    );
    const kept = await svc.put('network', 'web', { tenantId: 'red', name: 'web2', subnets: ['10.0.0.0/24'] });
    expect(kept.object.vni).toBe(4097);
  });

  it('blocks deleting a network on it (409 naming the router) unless cascade, which deletes the router', async () => {
    await rejects(
      svc.delete('network', 'web'),
      'conflict',
      /^network 'web' still has 1 router \(router\/r1\); delete them first or use cascade/,
    );
    const r = await svc.delete('network', 'web', { cascade: true });
    expect(r.deleted).toEqual([
      { kind: 'network', id: 'web' },
      { kind: 'router', id: 'r1' },
    ]);
    expect(svc.list('router').items).toEqual([]);
    // db is free again.
    await svc.put('router', 'r2', { tenantId: 'red', interfaces: [{ networkId: 'db', ip: '10.0.1.1' }] });
  });

  it('goes with its tenant on a tenant cascade, and blocks the tenant delete without it', async () => {
    await rejects(svc.delete('tenant', 'red'), 'conflict', /^tenant 'red' still has .*1 router/);
    const r = await svc.delete('tenant', 'red', { cascade: true });
    expect(r.deleted).toContainEqual({ kind: 'router', id: 'r1' });
    expect(r.deleted.filter((d) => d.kind === 'router')).toHaveLength(1);
    expect(svc.list('router').items).toEqual([]);
    expect(svc.list('network').items.map((n) => n.id)).toEqual(['bnet']);
  });

  it('deletes without touching its networks', async () => {
    await svc.delete('router', 'r1');
    expect(svc.list('network', { tenantId: 'red' }).items).toHaveLength(3);
    await svc.delete('network', 'web');
  });
});

describe('generated endpoint MACs', () => {
  it('never take the router prefix: the generator makes 02:... and the rules draw again past it', () => {
    for (let i = 0; i < 2000; i++) expect(randomMac().startsWith('02:')).toBe(true);
    const state = new IntentState();
    state.apply({
      type: 'put',
      key: 'network/n',
      value: { id: 'n', tenantId: 't', vni: 7, subnets: [] } as never,
    });
    const drawn = ['0a:57:72:00:00:07', '0a:57:72:00:00:08', '02:00:00:00:00:01'];
    const env: RuleEnv = {
      state,
      vniRange: [1, 10],
      vniCursor: { last: 0 },
      newId: () => 'id',
      randomMac: () => drawn.shift()!,
    };
    const e = buildObject('endpoint', env, { id: 'e', networkId: 'n' });
    expect(e.mac).toBe('02:00:00:00:00:01');
    expect(drawn).toEqual([]);
  });
});
