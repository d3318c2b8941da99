import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest } from './router-fixture.js';

/** A router interface sent without `ip`: kept when the router is there already, else the first host. */

let svc: IntentService;
redBlueEachTest((s) => {
  svc = s;
});

const ipsOf = (id: string) => svc.get('router', id).interfaces.map((i) => `${i.networkId}=${i.ip}`);
const net = (id: string, subnets: string[]) => svc.put('network', id, { tenantId: 'red', name: id, subnets });

describe('router interface address: the default', () => {
  it('is the first host address of the first IPv4 subnet, in subnets order, stored like a given one', async () => {
    await net('multi', ['fd00::/64', '10.7.0.0/24', '10.6.0.0/24']);
    const { object } = await svc.create('router', {
      tenantId: 'red',
      interfaces: [{ networkId: 'web' }, { networkId: 'multi' }],
    });
    expect(object.interfaces).toEqual([
      { networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' },
      // The IPv6 subnet first in the list does not move the IPv4 default; it gets its own (router-ipv6.test.ts).
      { networkId: 'multi', ip: '10.7.0.1', ipv6: 'fd00::1', mac: expect.stringMatching(/^0a:57:72:/) },
    ]);
    // Stored: the router owns the address, so an endpoint may not take it now.
    await rejects(
      svc.create('endpoint', { networkId: 'multi', ips: ['10.7.0.1'] }),
      'conflict',
      /^ips\[0\]: 10\.7\.0\.1 is the address of router '.+' on network 'multi'/,
    );
  });

  it('is the lower address of a /31 and the address itself of a /32 (RFC 3021)', async () => {
    await net('p2p', ['10.9.0.6/31']);
    await net('host', ['10.9.1.7/32']);
    await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'p2p' }, { networkId: 'host' }],
    });
    expect(ipsOf('r1')).toEqual(['p2p=10.9.0.6', 'host=10.9.1.7']);
  });

  it('is taken for a network newly attached, next to kept and given addresses', async () => {
    await svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'web', ip: '10.0.0.254' }] });
    await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'web' }, { networkId: 'db' }, { networkId: 'app', ip: '10.0.2.9' }],
    });
    expect(ipsOf('r1')).toEqual(['web=10.0.0.254', 'db=10.0.1.1', 'app=10.0.2.9']);
  });

  it('is not the address another router had: a network moved between routers takes the default', async () => {
    await svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'web', ip: '10.0.0.254' }] });
    await svc.update('router', 'r1', { interfaces: [] });
    await svc.put('router', 'r2', { tenantId: 'red', interfaces: [{ networkId: 'web' }] });
    expect(ipsOf('r2')).toEqual(['web=10.0.0.1']);
    // Detached and attached again: the router no longer has an address there to keep.
    await svc.update('router', 'r2', { interfaces: [{ networkId: 'web', ip: '10.0.0.254' }] });
    await svc.update('router', 'r2', { interfaces: [] });
    await svc.update('router', 'r2', { interfaces: [{ networkId: 'web' }] });
    expect(ipsOf('r2')).toEqual(['web=10.0.0.1']);
  });
});

describe('router interface address: omitted on an update', () => {
  it('keeps the current address on PATCH and PUT: re-sending the list moves no gateway, writes nothing', async () => {
    const made = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [
        { networkId: 'web', ip: '10.0.0.254' },
        { networkId: 'db', ip: '10.0.1.9' },
      ],
    });
    const patched = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'web' }, { networkId: 'db' }],
    });
    expect(patched.revision).toBe(made.object.revision);
    const put = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'db' }, { networkId: 'web' }],
    });
    expect(ipsOf('r1')).toEqual(['db=10.0.1.9', 'web=10.0.0.254']);
    expect(put.object.revision).toBeGreaterThan(made.object.revision);
  });

  it('keeps an address a static route relies on not being its own', async () => {
    await svc.put('network', 'edge', { tenantId: 'red', name: 'edge', subnets: ['10.3.0.0/24'] });
    await svc.put('endpoint', 'nat', { networkId: 'edge', ips: ['10.3.0.9'], portSecurity: false });
    const routes = [{ destination: '0.0.0.0/0', nexthop: '10.3.0.9' }];
    await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'edge', ip: '10.3.0.1' }],
      routes,
    });
    await svc.update('router', 'r1', { interfaces: [{ networkId: 'edge' }, { networkId: 'web' }] });
    expect(ipsOf('r1')).toEqual(['edge=10.3.0.1', 'web=10.0.0.1']);
    expect(svc.get('router', 'r1').routes).toEqual(routes);
  });
});

describe('router interface address: refused, naming interfaces[i].ip', () => {
  it('refuses a default an endpoint holds (409), saying it was the default and to give the address', async () => {
    await svc.put('endpoint', 'vm1', { networkId: 'web', ips: ['10.0.0.1'] });
    const e = await rejects(
      svc.create('router', { tenantId: 'red', interfaces: [{ networkId: 'db' }, { networkId: 'web' }] }),
      'conflict',
      /^interfaces\[1\]\.ip: 10\.0\.0\.1 \(the default: the first host address of 10\.0\.0\.0\/24\) is already used by endpoint 'vm1' in network 'web'; give interfaces\[1\]\.ip$/,
    );
    expect(e.field).toBe('interfaces[1].ip');
    const given = await svc.create('router', {
      tenantId: 'red',
      interfaces: [{ networkId: 'db' }, { networkId: 'web', ip: '10.0.0.254' }],
    });
    expect(given.object.interfaces.map((i) => i.ip)).toEqual(['10.0.1.1', '10.0.0.254']);
  });

  it('says nothing of a default for a given address an endpoint holds', async () => {
    await svc.put('endpoint', 'vm1', { networkId: 'web', ips: ['10.0.0.1'] });
    await rejects(
      svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'web', ip: '10.0.0.1' }] }),
      'conflict',
      /^interfaces\[0\]\.ip: 10\.0\.0\.1 is already used by endpoint 'vm1' in network 'web'$/,
    );
  });

  it('refuses an omitted address on a network without an IPv4 subnet, and still checks a given one', async () => {
    await net('v6', ['fd00::/64']);
    await rejects(
      svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'web' }, { networkId: 'v6' }] }),
      'invalid',
      /^interfaces\[1\]\.ip: network 'v6' has no IPv4 subnet; a router interface needs one$/,
    );
    await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [{ networkId: 'web' }, { networkId: 'db', ip: '10.0.1.255' }],
      }),
      'invalid',
      /^interfaces\[1\]\.ip: 10\.0\.1\.255 is the broadcast address of 10\.0\.1\.0\/24/,
    );
    // An empty address is a bad address, not an omitted one.
    await rejects(
      svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'web', ip: '' }] }),
      'invalid',
      /^interfaces\[0\]\.ip: /,
    );
    expect(() => svc.get('router', 'r1')).toThrow(/not found/);
  });

  it("refuses a static route to the defaulted address: it is the router's own", async () => {
    await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [{ networkId: 'web' }],
        routes: [{ destination: '0.0.0.0/0', nexthop: '10.0.0.1' }],
      }),
      'invalid',
      /^routes\[0\]\.nexthop: 10\.0\.0\.1 is this router's own address on network 'web'/,
    );
  });
});

describe('router interface address: omitted in a batch', () => {
  const router = (interfaces: object[]): BatchOp => ({
    op: 'replace',
    kind: 'router',
    id: 'r1',
    body: { tenantId: 'red', interfaces },
  });

  it('defaults after networks of the same batch, and a replace keeps it (re-applying changes nothing)', async () => {
    const ops: BatchOp[] = [
      {
        op: 'create',
        kind: 'network',
        id: 'n1',
        body: { tenantId: 'red', name: 'n1', subnets: ['10.8.0.0/24'] },
      },
      router([{ networkId: 'n1' }, { networkId: 'web' }]),
    ];
    await svc.batch(ops);
    expect(ipsOf('r1')).toEqual(['n1=10.8.0.1', 'web=10.0.0.1']);
    const moved = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'n1', ip: '10.8.0.254' }, { networkId: 'web' }],
    });
    await svc.batch([router([{ networkId: 'n1' }, { networkId: 'web' }])]);
    expect(ipsOf('r1')).toEqual(['n1=10.8.0.254', 'web=10.0.0.1']);
    expect(svc.get('router', 'r1').revision).toBe(moved.object.revision);
  });

  it('refuses a default an endpoint earlier in the batch takes, naming the op and field; nothing is written', async () => {
    const e = await rejects(
      svc.batch([
        { op: 'create', kind: 'endpoint', id: 'vm1', body: { networkId: 'db', ips: ['10.0.1.1'] } },
        router([{ networkId: 'db' }]),
      ]),
      'conflict',
      /^ops\[1\] \(router 'r1'\): interfaces\[0\]\.ip: 10\.0\.1\.1 \(the default: the first host address of 10\.0\.1\.0\/24\) is already used by endpoint 'vm1' in network 'db'; give interfaces\[0\]\.ip$/,
    );
    expect(e.field).toBe('ops[1].body.interfaces[0].ip');
    expect(svc.list('endpoint').items).toEqual([]);
  });
});
