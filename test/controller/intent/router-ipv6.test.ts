import { describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest } from './router-fixture.js';

/**
 * A router interface's IPv6 address (controller/intent/router-ipv6.ts): given, false (none), or
 * omitted (kept, else the first host address of the network's first IPv6 subnet, else none).
 */

let svc: IntentService;
redBlueEachTest(
  (s) => {
    svc = s;
  },
  async (s) => {
    // Dual-stack networks of red next to the fixture's IPv4-only web, db and app.
    await s.put('network', 'ds', { tenantId: 'red', name: 'ds', subnets: ['10.1.0.0/24', 'fd00:1::/64'] });
    await s.put('network', 'ds2', { tenantId: 'red', name: 'ds2', subnets: ['fd00:2::/64', '10.2.0.0/24'] });
  },
);

const v6Of = (id: string) =>
  svc.get('router', id).interfaces.map((i) => `${i.networkId}=${i.ip},${i.ipv6 ?? '-'}`);
/** PUT r1 with these interfaces (typed loosely: some tests send what the schema refuses). */
const router = (interfaces: Array<{ networkId: string; ip?: string; ipv6?: unknown }>) =>
  svc.put('router', 'r1', { tenantId: 'red', interfaces: interfaces as Array<{ networkId: string }> });
const net = (id: string, subnets: string[]) => svc.put('network', id, { tenantId: 'red', name: id, subnets });

describe('router interface IPv6 address: the default and what is kept', () => {
  it('gives a new interface on a dual-stack network the first host of its first IPv6 subnet, none on IPv4-only', async () => {
    const { object } = await svc.create('router', {
      tenantId: 'red',
      interfaces: [{ networkId: 'ds' }, { networkId: 'web' }, { networkId: 'ds2', ip: '10.2.0.254' }],
    });
    expect(object.interfaces).toEqual([
      { networkId: 'ds', ip: '10.1.0.1', ipv6: 'fd00:1::1', mac: expect.stringMatching(/^0a:57:72:/) },
      { networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' },
      { networkId: 'ds2', ip: '10.2.0.254', ipv6: 'fd00:2::1', mac: expect.stringMatching(/^0a:57:72:/) },
    ]);
    // Stored next to the IPv4 address, and no ipv6 member at all where there is none.
    expect(Object.keys(object.interfaces[0]!)).toEqual(['networkId', 'ip', 'ipv6', 'mac']);
    expect(object.interfaces[1]).not.toHaveProperty('ipv6');
  });

  it('is the lowest address of a /127 or /128, and stores a given address as canonical text', async () => {
    await net('p2p', ['10.9.0.0/31', 'fd00:9::/127']);
    await net('host', ['10.9.1.7/32', 'fd00:a::5/128']);
    await router([{ networkId: 'p2p' }, { networkId: 'host' }, { networkId: 'ds', ipv6: 'FD00:1:0:0::00A' }]);
    expect(v6Of('r1')).toEqual(['p2p=10.9.0.0,fd00:9::', 'host=10.9.1.7,fd00:a::5', 'ds=10.1.0.1,fd00:1::a']);
    // The upper address of a /127 is usable too.
    await router([{ networkId: 'p2p', ipv6: 'fd00:9::1' }]);
    expect(v6Of('r1')).toEqual(['p2p=10.9.0.0,fd00:9::1']);
  });

  it('keeps the current address when omitted: re-sending the list moves no gateway and writes nothing', async () => {
    const made = await router([{ networkId: 'ds', ipv6: 'fd00:1::fe' }, { networkId: 'ds2' }]);
    const again = await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds' }, { networkId: 'ds2' }],
    });
    expect(again.revision).toBe(made.object.revision);
    await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'ds2' }, { networkId: 'ds' }],
    });
    expect(v6Of('r1')).toEqual(['ds2=10.2.0.1,fd00:2::1', 'ds=10.1.0.1,fd00:1::fe']);
  });

  it('removes it with false, on any network; omitted again (any later PATCH), it stays off; new on the network again, the default', async () => {
    await router([{ networkId: 'ds' }]);
    await svc.update('router', 'r1', {
      interfaces: [
        { networkId: 'ds', ipv6: false },
        { networkId: 'web', ipv6: false },
      ],
    });
    expect(v6Of('r1')).toEqual(['ds=10.1.0.1,-', 'web=10.0.0.1,-']);
    expect(svc.get('router', 'r1').interfaces[0]).not.toHaveProperty('ipv6');
    // No IPv6 address on ds now: an endpoint may take the former one.
    await svc.put('endpoint', 'vm1', { networkId: 'ds', ips: ['fd00:1::1'] });
    await svc.delete('endpoint', 'vm1');
    await svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }, { networkId: 'web' }] });
    expect(v6Of('r1')).toEqual(['ds=10.1.0.1,-', 'web=10.0.0.1,-']);
    await svc.update('router', 'r1', { name: 'renamed' });
    expect(v6Of('r1')).toEqual(['ds=10.1.0.1,-', 'web=10.0.0.1,-']);
    // Detached and attached again: new on ds, it takes the default.
    await svc.update('router', 'r1', { interfaces: [{ networkId: 'web' }] });
    await svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }, { networkId: 'web' }] });
    expect(v6Of('r1')).toEqual(['ds=10.1.0.1,fd00:1::1', 'web=10.0.0.1,-']);
  });

  it('keeps an address through a PATCH that does not name interfaces, even with an endpoint on the default', async () => {
    await router([{ networkId: 'ds', ipv6: 'fd00:1::fe' }]);
    await svc.put('endpoint', 'vm1', { networkId: 'ds', ips: ['fd00:1::1'] });
    await svc.update('router', 'r1', { name: 'renamed' });
    await svc.update('router', 'r1', { interfaces: [{ networkId: 'ds' }] });
    expect(v6Of('r1')).toEqual(['ds=10.1.0.1,fd00:1::fe']);
  });

  it('lets an IPv6 subnet be added to a network whose interface has none; IPv6 is turned on there by giving the address', async () => {
    const made = await router([{ networkId: 'web' }]);
    await svc.update('network', 'web', { subnets: ['10.0.0.0/24', 'fd00:7::/64'] });
    expect(svc.get('router', 'r1').revision).toBe(made.object.revision);
    expect(v6Of('r1')).toEqual(['web=10.0.0.1,-']);
    await router([{ networkId: 'web' }]);
    expect(v6Of('r1')).toEqual(['web=10.0.0.1,-']);
    await router([{ networkId: 'web', ipv6: 'fd00:7::1' }]);
    expect(v6Of('r1')).toEqual(['web=10.0.0.1,fd00:7::1']);
  });
});

describe('router interface IPv6 address: refused, naming interfaces[i].ipv6', () => {
  const at = (ipv6: unknown) => router([{ networkId: 'web' }, { networkId: 'ds', ipv6 }]);

  it('refuses what is not an IPv6 address (an IPv4 one, a name, empty, true)', async () => {
    for (const [bad, why] of [
      ['10.1.0.5', "'10.1.0.5' is not an IPv6 address"],
      ['gateway', "'gateway' is not an IPv6 address"],
      ['fd00:1::1/64', "'fd00:1::1/64' is not an IPv6 address"],
    ] as const) {
      const e = await rejects(
        at(bad),
        'invalid',
        new RegExp(`^interfaces\\[1\\]\\.ipv6: ${why.replace(/[./]/g, '\\$&')}$`),
      );
      expect(e.field).toBe('interfaces[1].ipv6');
    }
    // Refused by the schema already: neither a string of 2-45 characters nor false.
    for (const bad of ['', true, 'x'.repeat(46)])
      await rejects(at(bad), 'invalid', /^interfaces\[1\]\.ipv6: /);
    expect(() => svc.get('router', 'r1')).toThrow(/not found/);
  });

  it('refuses an address outside the IPv6 subnets, listing them', async () => {
    await rejects(
      at('fd00:2::1'),
      'invalid',
      /^interfaces\[1\]\.ipv6: fd00:2::1 is outside the IPv6 subnets of network 'ds' \(fd00:1::\/64\)$/,
    );
    await net('two', ['10.4.0.0/24', 'fd00:4::/64', 'fd00:5::/64']);
    await rejects(
      router([{ networkId: 'two', ipv6: 'fd00:6::1' }]),
      'invalid',
      /^interfaces\[0\]\.ipv6: fd00:6::1 is outside the IPv6 subnets of network 'two' \(fd00:4::\/64, fd00:5::\/64\)$/,
    );
    expect(v6Of((await router([{ networkId: 'two', ipv6: 'fd00:5::9' }])).object.id)).toEqual([
      'two=10.4.0.1,fd00:5::9',
    ]);
  });

  it('refuses an explicit address on a network without an IPv6 subnet; false there is fine', async () => {
    await rejects(
      router([{ networkId: 'web', ipv6: 'fd00:1::1' }]),
      'invalid',
      /^interfaces\[0\]\.ipv6: network 'web' has no IPv6 subnet; omit interfaces\[0\]\.ipv6 or give false \(no IPv6 routing there\)$/,
    );
    expect((await router([{ networkId: 'web', ipv6: false }])).object.interfaces[0]).not.toHaveProperty(
      'ipv6',
    );
  });

  it('refuses the subnet-router anycast address (all-zeros host) below /127', async () => {
    await rejects(
      at('fd00:1::'),
      'invalid',
      /^interfaces\[1\]\.ipv6: fd00:1:: is the subnet-router anycast address of fd00:1::\/64, not a usable address$/,
    );
    await rejects(at('fd00:1:0::0'), 'invalid', /fd00:1:: is the subnet-router anycast address/);
  });

  it('still needs the IPv4 address: an IPv6-only network stays unroutable', async () => {
    await net('v6', ['fd00:6::/64']);
    await rejects(
      router([{ networkId: 'v6', ipv6: 'fd00:6::1' }]),
      'invalid',
      /^interfaces\[0\]\.ip: network 'v6' has no IPv4 subnet; a router interface needs one$/,
    );
  });

  it('refuses a given address an endpoint holds (409), saying nothing of a default', async () => {
    await svc.put('endpoint', 'vm1', { networkId: 'ds', ips: ['10.1.0.9', 'fd00:1::9'] });
    const e = await rejects(
      at('fd00:1:0::9'),
      'conflict',
      /^interfaces\[1\]\.ipv6: fd00:1::9 is already used by endpoint 'vm1' in network 'ds'$/,
    );
    expect(e.field).toBe('interfaces[1].ipv6');
  });

  it('refuses a defaulted address an endpoint holds (409), saying it was the default and the ways out', async () => {
    await svc.put('endpoint', 'vm1', { networkId: 'ds', ips: ['fd00:1::1'] });
    await rejects(
      router([{ networkId: 'web' }, { networkId: 'ds' }]),
      'conflict',
      /^interfaces\[1\]\.ipv6: fd00:1::1 \(the default: the first host address of fd00:1::\/64\) is already used by endpoint 'vm1' in network 'ds'; give interfaces\[1\]\.ipv6 \(an address, or false for no IPv6 routing there\)$/,
    );
    expect(v6Of((await at(false)).object.id)).toEqual(['web=10.0.0.1,-', 'ds=10.1.0.1,-']);
  });

  it('refuses a defaulted address an endpoint earlier in the batch takes, naming the op and field', async () => {
    const e = await rejects(
      svc.batch([
        { op: 'create', kind: 'endpoint', id: 'vm1', body: { networkId: 'ds', ips: ['fd00:1::1'] } },
        {
          op: 'replace',
          kind: 'router',
          id: 'r1',
          body: { tenantId: 'red', interfaces: [{ networkId: 'ds' }] },
        },
      ]),
      'conflict',
      /^ops\[1\] \(router 'r1'\): interfaces\[0\]\.ipv6: fd00:1::1 \(the default: /,
    );
    expect(e.field).toBe('ops[1].body.interfaces[0].ipv6');
    expect(svc.list('endpoint').items).toEqual([]);
  });
});

describe("an endpoint may not take the router's IPv6 address", () => {
  it('refuses it (409) in any spelling, naming ips[i] and the router', async () => {
    await router([{ networkId: 'ds' }]);
    for (const ip of ['fd00:1::1', 'FD00:1:0:0:0:0:0:1']) {
      const e = await rejects(
        svc.create('endpoint', { networkId: 'ds', ips: ['10.1.0.5', ip] }),
        'conflict',
        /^ips\[1\]: fd00:1::1 is the address of router 'r1' on network 'ds'$/,
      );
      expect(e.field).toBe('ips[1]');
    }
    await svc.create('endpoint', { networkId: 'ds', ips: ['fd00:1::2'] });
  });
});

describe('router interface IPv6 address: subnets and overlap', () => {
  it('refuses networks with overlapping IPv6 subnets where the router routes IPv6 on both, naming both', async () => {
    await net('wide', ['10.9.0.0/24', 'fd00::/16']);
    const refused =
      /^interfaces\[1\]\.networkId: fd00::\/16 of network 'wide' overlaps fd00:1::\/64 of network 'ds' \(interfaces\[0\]\); routed subnets must not overlap$/;
    const e = await rejects(router([{ networkId: 'ds' }, { networkId: 'wide' }]), 'invalid', refused);
    expect(e.field).toBe('interfaces[1].networkId');
    // Without IPv6 on wide the router sends no IPv6 there: its prefixes meet nothing.
    await router([{ networkId: 'ds' }, { networkId: 'wide', ipv6: false }]);
    // Turning IPv6 on there later is checked the same way.
    await rejects(router([{ networkId: 'ds' }, { networkId: 'wide', ipv6: 'fd00::fe' }]), 'invalid', refused);
    // IPv4 and IPv6 subnets of the same shape never overlap one another.
    await router([{ networkId: 'ds' }, { networkId: 'ds2' }]);
  });

  it("refuses a network subnet change that leaves the router's IPv6 address outside, naming subnets", async () => {
    await router([{ networkId: 'ds' }, { networkId: 'web' }]);
    const e = await rejects(
      svc.update('network', 'ds', { subnets: ['10.1.0.0/24', 'fd00:5::/64'] }),
      'invalid',
      /^subnets: router 'r1' has its interface fd00:1::1 on this network, which would be outside the IPv6 subnets \(fd00:5::\/64\); detach the network from the router or set the interface's ipv6 to false first$/,
    );
    expect(e.field).toBe('subnets');
    await rejects(
      svc.put('network', 'ds', { tenantId: 'red', name: 'ds', subnets: ['10.1.0.0/24'] }),
      'invalid',
      /^subnets: router 'r1' has its interface fd00:1::1 on this network, which would be outside the IPv6 subnets \(none\)/,
    );
    // Narrower, still holding the address: fine. Without ipv6 on the interface: anything goes.
    await svc.update('network', 'ds', { subnets: ['10.1.0.0/24', 'fd00:1::/126'] });
    await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds', ipv6: false }, { networkId: 'web' }],
    });
    await svc.update('network', 'ds', { subnets: ['10.1.0.0/24'] });
    expect(svc.get('network', 'ds').subnets).toEqual(['10.1.0.0/24']);
  });

  it('refuses a subnet change that makes the router address the subnet-router anycast address', async () => {
    await router([{ networkId: 'ds', ipv6: 'fd00:1::4' }]);
    await rejects(
      svc.update('network', 'ds', { subnets: ['10.1.0.0/24', 'fd00:1::4/126'] }),
      'invalid',
      /^subnets: router 'r1' has its interface fd00:1::4 on this network, which would be the subnet-router anycast address of fd00:1::4\/126;/,
    );
  });

  it("refuses an IPv6 subnet overlapping another of the router's IPv6 networks, naming it and the router", async () => {
    await router([{ networkId: 'ds' }, { networkId: 'ds2' }]);
    await rejects(
      svc.update('network', 'ds2', { subnets: ['10.2.0.0/24', 'fd00:2::/64', 'fd00:1:0:0:8000::/65'] }),
      'invalid',
      /^subnets: fd00:1:0:0:8000::\/65 overlaps fd00:1::\/64 of network 'ds', also on router 'r1'$/,
    );
    await svc.update('network', 'ds2', { subnets: ['10.2.0.0/24', 'fd00:2::/64', 'fd00:3::/64'] });
    // web routes no IPv6 (it had no IPv6 subnet when it joined): an IPv6 prefix there meets nothing.
    await svc.update('router', 'r1', {
      interfaces: [{ networkId: 'ds' }, { networkId: 'ds2' }, { networkId: 'web' }],
    });
    await svc.update('network', 'web', { subnets: ['10.0.0.0/24', 'fd00:1:0:0:8000::/65'] });
    expect(svc.get('router', 'r1').interfaces.find((i) => i.networkId === 'web')).not.toHaveProperty('ipv6');
  });
});

describe('static routes next to IPv6 interfaces (IPv6 routes: router-routes6.test.ts)', () => {
  it("refuses the router's own IPv6 address as a next hop (of an IPv4 route: another family), and takes an IPv4 route next to an IPv6 interface", async () => {
    await svc.put('endpoint', 'nat', { networkId: 'ds', ips: ['10.1.0.9'], portSecurity: false });
    const own = (destination: string) =>
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [{ networkId: 'ds' }],
        routes: [{ destination, nexthop: 'fd00:1::1' }],
      });
    await rejects(
      own('0.0.0.0/0'),
      'invalid',
      /^routes\[0\]\.nexthop: fd00:1::1 is IPv6 but the destination 0\.0\.0\.0\/0 is IPv4; a next hop is of its destination's family$/,
    );
    await rejects(
      own('::/0'),
      'invalid',
      /^routes\[0\]\.nexthop: fd00:1::1 is this router's own address on network 'ds'; a next hop is another host$/,
    );
    const { object } = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'ds' }],
      routes: [{ destination: '0.0.0.0/0', nexthop: '10.1.0.9' }],
    });
    expect(object.interfaces[0]?.ipv6).toBe('fd00:1::1');
  });
});
