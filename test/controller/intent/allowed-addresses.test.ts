import { beforeEach, describe, expect, it } from 'vitest';
import { allowedHolder, endpointsAllowing } from '../../../controller/intent/allowed-addresses.js';
import type { Endpoint } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { IntentState } from '../../../controller/intent/state.js';
import { allowedFixture } from './allowed-fixture.js';

/**
 * An endpoint's allowed addresses (VIPs, routed prefixes): normalised, kept in order, cleared by
 * `[]`; never another endpoint's fixed address nor the router's; indexed per network.
 */

const f = allowedFixture();
const { ep, refused } = f;
let svc: IntentService;
beforeEach(() => {
  svc = f.service();
});

describe('allowed addresses: stored form', () => {
  it('stores host CIDRs as the address, other CIDRs canonical, in the order given', async () => {
    const { object } = await ep('vm1', {
      ips: ['10.0.0.5'],
      allowedAddresses: ['10.0.0.100/32', '10.1.0.0/16', '2001:DB8::/64', 'fd00:1::64/128', '10.0.0.101'],
    });
    const want = ['10.0.0.100', '10.1.0.0/16', '2001:db8::/64', 'fd00:1::64', '10.0.0.101'];
    expect(object.allowedAddresses).toEqual(want);
    expect(svc.get('endpoint', 'vm1').allowedAddresses).toEqual(want);
  });

  it('has no key without any, nor with [] on create; [] in a PATCH removes them, other PATCHes keep them', async () => {
    expect('allowedAddresses' in (await ep('vm0')).object).toBe(false);
    const empty = await svc.create('endpoint', { id: 'vm1', networkId: 'n1', allowedAddresses: [] });
    expect('allowedAddresses' in empty.object).toBe(false);
    await svc.update('endpoint', 'vm1', { allowedAddresses: ['10.0.0.100', '10.1.0.0/16'] });
    const renamed = await svc.update('endpoint', 'vm1', { name: 'web' });
    expect(renamed.object.allowedAddresses).toEqual(['10.0.0.100', '10.1.0.0/16']);
    const replaced = await svc.update('endpoint', 'vm1', { allowedAddresses: ['10.1.0.0/16'] });
    expect(replaced.object.allowedAddresses).toEqual(['10.1.0.0/16']);
    const cleared = await svc.update('endpoint', 'vm1', { allowedAddresses: [] });
    expect('allowedAddresses' in cleared.object).toBe(false);
    expect('allowedAddresses' in svc.get('endpoint', 'vm1')).toBe(false);
    expect(svc.get('endpoint', 'vm1').name).toBe('web');
    // A PUT without them has none.
    await svc.update('endpoint', 'vm1', { allowedAddresses: ['10.0.0.100'] });
    expect('allowedAddresses' in (await ep('vm1')).object).toBe(false);
  });

  it('a CIDR may hold its own ips (a VM routing for its subnet), and need not lie in the subnets', async () => {
    const { object } = await ep('vm1', {
      ips: ['10.0.0.5'],
      allowedAddresses: ['10.0.0.0/25', '192.168.0.0/16'],
    });
    expect(object.allowedAddresses).toEqual(['10.0.0.0/25', '192.168.0.0/16']);
  });
});

describe('allowed addresses: invalid entries', () => {
  const bad: Array<[string, RegExp]> = [
    ['nope', /'nope' is not an IPv4 or IPv6 address or CIDR$/],
    ['10.0.0.300', /'10\.0\.0\.300' is not an IPv4 or IPv6 address or CIDR$/],
    ['nope/24', /'nope\/24' is not an IPv4 or IPv6 address or CIDR$/],
    ['10.0.0.5/24', /'10\.0\.0\.5\/24' has host bits set \(10\.0\.0\.0\/24\?\)$/],
    ['fd00:1::5/64', /'fd00:1::5\/64' has host bits set \(fd00:1::\/64\?\)$/],
    ['10.0.0.0/33', /'10\.0\.0\.0\/33' has a prefix length outside 0-32$/],
    ['224.0.0.18', /224\.0\.0\.18 is multicast \(224\.0\.0\.0\/4\); only unicast sources can be allowed$/],
    ['239.0.0.0/8', /239\.0\.0\.0\/8 is multicast \(224\.0\.0\.0\/4\)/],
    ['ff02::12', /ff02::12 is multicast \(ff00::\/8\)/],
    ['fe80::1', /fe80::1 is link-local \(fe80::\/10\): every endpoint may send from those already$/],
    ['fe80::/64', /fe80::\/64 is link-local \(fe80::\/10\)/],
  ];
  it('refuses what is not a unicast address or CIDR, naming the entry; nothing is stored', async () => {
    for (const [value, why] of bad) {
      await refused(
        () => ep('vm1', { allowedAddresses: ['10.0.0.100', value] }),
        'invalid',
        new RegExp(`^allowedAddresses\\[1\\]: ${why.source}`),
        'allowedAddresses[1]',
      );
    }
    expect(() => svc.get('endpoint', 'vm1')).toThrow(/not found/);
    // On PATCH too: the stored list stays.
    await ep('vm1', { allowedAddresses: ['10.0.0.100'] });
    for (const [value, why] of bad) {
      await refused(
        () => svc.update('endpoint', 'vm1', { allowedAddresses: [value] }),
        'invalid',
        new RegExp(`^allowedAddresses\\[0\\]: ${why.source}`),
        'allowedAddresses[0]',
      );
    }
    expect(svc.get('endpoint', 'vm1').allowedAddresses).toEqual(['10.0.0.100']);
  });

  it('refuses an entry listed twice after normalisation, and one of its own ips', async () => {
    await refused(
      () => ep('vm1', { allowedAddresses: ['10.0.0.100', '10.1.0.0/16', '10.0.0.100/32'] }),
      'invalid',
      /^allowedAddresses\[2\]: 10\.0\.0\.100 is listed twice \(allowedAddresses\[0\]\)$/,
      'allowedAddresses[2]',
    );
    await refused(
      () => ep('vm1', { allowedAddresses: ['2001:db8::/64', '2001:DB8:0::/64'] }),
      'invalid',
      /^allowedAddresses\[1\]: 2001:db8::\/64 is listed twice \(allowedAddresses\[0\]\)$/,
      'allowedAddresses[1]',
    );
    await refused(
      () => ep('vm1', { ips: ['10.0.0.5', 'fd00:1::5'], allowedAddresses: ['fd00:1::5/128'] }),
      'invalid',
      /^allowedAddresses\[0\]: fd00:1::5 is already one of its ips$/,
      'allowedAddresses[0]',
    );
    // PATCH: the allowed list kept, the new ips take one of its addresses.
    await ep('vm1', { ips: ['10.0.0.5'], allowedAddresses: ['10.0.0.100'] });
    await refused(
      () => svc.update('endpoint', 'vm1', { ips: ['10.0.0.5', '10.0.0.100'] }),
      'invalid',
      /^allowedAddresses\[0\]: 10\.0\.0\.100 is already one of its ips$/,
      'allowedAddresses[0]',
    );
    // Moving it from allowed to fixed in one PATCH is fine, and back again.
    const fixed = await svc.update('endpoint', 'vm1', {
      ips: ['10.0.0.5', '10.0.0.100'],
      allowedAddresses: [],
    });
    expect(fixed.object.ips).toEqual(['10.0.0.5', '10.0.0.100']);
    const back = await svc.update('endpoint', 'vm1', { ips: ['10.0.0.5'], allowedAddresses: ['10.0.0.100'] });
    expect(back.object.allowedAddresses).toEqual(['10.0.0.100']);
  });

  it('refuses them with portSecurity false, on create and on a PATCH of either field', async () => {
    const msg =
      /^allowedAddresses: allowed addresses widen port security; with portSecurity false nothing is checked/;
    await refused(
      () => ep('vm1', { portSecurity: false, allowedAddresses: ['10.0.0.100'] }),
      'invalid',
      msg,
      'allowedAddresses',
    );
    await ep('vm1', { allowedAddresses: ['10.0.0.100'] });
    await refused(
      () => svc.update('endpoint', 'vm1', { portSecurity: false }),
      'invalid',
      msg,
      'allowedAddresses',
    );
    await ep('nat', { portSecurity: false });
    await refused(
      () => svc.update('endpoint', 'nat', { allowedAddresses: ['10.1.0.0/16'] }),
      'invalid',
      msg,
      'allowedAddresses',
    );
    // Both in one PATCH: fine.
    const off = await svc.update('endpoint', 'vm1', { portSecurity: false, allowedAddresses: [] });
    expect(off.object.portSecurity).toBe(false);
    expect('allowedAddresses' in off.object).toBe(false);
  });
});

describe('allowed addresses and other endpoints', () => {
  it("refuses another endpoint's fixed address of the network (exact or /32); CIDRs may hold them", async () => {
    await ep('vm2', { ips: ['10.0.0.7', 'fd00:1::7'] });
    for (const [value, text] of [
      ['10.0.0.7', '10\\.0\\.0\\.7'],
      ['10.0.0.7/32', '10\\.0\\.0\\.7'],
      ['fd00:1::7', 'fd00:1::7'],
    ] as const) {
      await refused(
        () => ep('vm1', { allowedAddresses: [value] }),
        'conflict',
        new RegExp(
          `^allowedAddresses\\[0\\]: ${text} is an address of another endpoint of network 'n1' \\('vm2'\\)`,
        ),
        'allowedAddresses[0]',
      );
    }
    await ep('vm1', { allowedAddresses: ['10.0.0.100'] });
    await refused(
      () => svc.update('endpoint', 'vm1', { allowedAddresses: ['10.0.0.100', '10.0.0.7'] }),
      'conflict',
      /^allowedAddresses\[1\]: 10\.0\.0\.7 is an address of another endpoint of network 'n1'/,
      'allowedAddresses[1]',
    );
    expect(svc.get('endpoint', 'vm1').allowedAddresses).toEqual(['10.0.0.100']);
    // A broader CIDR (a router VM) may hold other endpoints' addresses.
    const routed = await svc.update('endpoint', 'vm1', { allowedAddresses: ['10.0.0.0/28', 'fd00:1::/64'] });
    expect(routed.object.allowedAddresses).toEqual(['10.0.0.0/28', 'fd00:1::/64']);
    // The same address in another network is another address.
    const other = await svc.create('endpoint', { id: 'x1', networkId: 'n2', allowedAddresses: ['10.0.0.7'] });
    expect(other.object.allowedAddresses).toEqual(['10.0.0.7']);
  });

  it('lets several endpoints allow the same VIP, and refuses it as a fixed address of any other one', async () => {
    await ep('vm1', { ips: ['10.0.0.11'], allowedAddresses: ['10.0.0.100', 'fd00:1::100'] });
    await ep('vm2', { ips: ['10.0.0.12'], allowedAddresses: ['10.0.0.100/32'] });
    expect(svc.get('endpoint', 'vm2').allowedAddresses).toEqual(['10.0.0.100']);
    const vip =
      /^ips\[1\]: 10\.0\.0\.100 is an allowed address \(a VIP\) of endpoint 'vm1' in network 'n1'; a fixed address would take its ARP answers$/;
    await refused(() => ep('vm3', { ips: ['10.0.0.13', '10.0.0.100'] }), 'conflict', vip, 'ips[1]');
    await refused(
      () => ep('vm3', { ips: ['fd00:1::100'] }),
      'conflict',
      /^ips\[0\]: fd00:1::100 is an allowed address \(a VIP\) of endpoint 'vm1' in network 'n1'/,
      'ips[0]',
    );
    await ep('vm3', { ips: ['10.0.0.13'] });
    await refused(
      () => svc.update('endpoint', 'vm3', { ips: ['10.0.0.13', '10.0.0.100'] }),
      'conflict',
      vip,
      'ips[1]',
    );
    // vm2 allows it too: it still cannot take it as its own fixed address.
    await refused(
      () => svc.update('endpoint', 'vm2', { ips: ['10.0.0.12', '10.0.0.100'], allowedAddresses: [] }),
      'conflict',
      vip,
      'ips[1]',
    );
    // Only exact entries reserve an address: inside an allowed CIDR, a fixed address is fine.
    await svc.update('endpoint', 'vm2', { allowedAddresses: ['10.0.0.100', '10.0.0.64/26'] });
    expect((await ep('vm4', { ips: ['10.0.0.70'] })).object.ips).toEqual(['10.0.0.70']);
  });

  it('frees the address when the endpoints allowing it are deleted or drop it', async () => {
    await ep('vm1', { allowedAddresses: ['10.0.0.100', '10.0.0.101'] });
    await ep('vm2', { allowedAddresses: ['10.0.0.100'] });
    await svc.delete('endpoint', 'vm1');
    // vm2 still allows it.
    await refused(
      () => ep('vm3', { ips: ['10.0.0.100'] }),
      'conflict',
      /^ips\[0\]: 10\.0\.0\.100 is an allowed address \(a VIP\) of endpoint 'vm2'/,
      'ips[0]',
    );
    // vm1's other entry went with it.
    expect((await ep('vm3', { ips: ['10.0.0.101'] })).object.ips).toEqual(['10.0.0.101']);
    await svc.update('endpoint', 'vm2', { allowedAddresses: ['10.1.0.0/16'] });
    expect((await ep('vm4', { ips: ['10.0.0.100'] })).object.ips).toEqual(['10.0.0.100']);
    await svc.delete('endpoint', 'vm2');
    await svc.delete('endpoint', 'vm4');
    expect((await ep('vm5', { allowedAddresses: ['10.0.0.100'] })).object.allowedAddresses).toEqual([
      '10.0.0.100',
    ]);
  });
});

describe('the allowed index (IntentState)', () => {
  const put = (s: IntentState, e: Partial<Endpoint> & { id: string }) =>
    s.apply({
      type: 'put',
      key: `endpoint/${e.id}`,
      value: {
        tenantId: 't1',
        networkId: 'n1',
        mac: '02:00:00:00:00:01',
        ips: [],
        ifaceId: e.id,
        securityGroupIds: [],
        portSecurity: true,
        revision: 1,
        createdAt: '',
        updatedAt: '',
        ...e,
      } as never,
    });
  const view = (s: IntentState) =>
    Object.fromEntries(
      [...s.allowed].map(([net, m]) => [
        net,
        Object.fromEntries([...m].map(([k, ids]) => [k, [...ids].sort()])),
      ]),
    );

  it('maps network -> entry -> endpoints, follows rewrites and deletes, and drops empty sets and maps', () => {
    const s = new IntentState();
    put(s, { id: 'e1', allowedAddresses: ['10.0.0.100', '10.1.0.0/16'] });
    put(s, { id: 'e2', allowedAddresses: ['10.0.0.100'] });
    put(s, { id: 'e3', networkId: 'n2', allowedAddresses: ['10.0.0.100'] });
    put(s, { id: 'e4' });
    expect(view(s)).toEqual({
      n1: { '10.0.0.100': ['e1', 'e2'], '10.1.0.0/16': ['e1'] },
      n2: { '10.0.0.100': ['e3'] },
    });
    put(s, { id: 'e1', allowedAddresses: ['10.1.0.0/16'] });
    expect(view(s).n1).toEqual({ '10.0.0.100': ['e2'], '10.1.0.0/16': ['e1'] });
    s.apply({ type: 'delete', key: 'endpoint/e2' });
    expect(view(s).n1).toEqual({ '10.1.0.0/16': ['e1'] });
    put(s, { id: 'e1' });
    s.apply({ type: 'delete', key: 'endpoint/e3' });
    expect(s.allowed.size).toBe(0);
  });

  it('allowedHolder: the smallest id allowing exactly that address; endpointsAllowing: prefixes too', () => {
    const s = new IntentState();
    put(s, { id: 'b', allowedAddresses: ['10.0.0.0/28', 'fd00::1'] });
    put(s, { id: 'a', allowedAddresses: ['10.0.0.5'] });
    put(s, { id: 'c', allowedAddresses: ['10.0.0.5'] });
    expect(allowedHolder(s, 'n1', '10.0.0.5')).toBe('a');
    expect(allowedHolder(s, 'n1', '10.0.0.9')).toBeUndefined();
    expect(allowedHolder(s, 'n1', 'fd00::1')).toBe('b');
    expect(allowedHolder(s, 'n2', '10.0.0.5')).toBeUndefined();
    expect(endpointsAllowing(s, 'n1', '10.0.0.5')).toEqual(['a', 'b', 'c']);
    expect(endpointsAllowing(s, 'n1', '10.0.0.9')).toEqual(['b']);
    expect(endpointsAllowing(s, 'n1', '10.0.0.16')).toEqual([]);
    expect(endpointsAllowing(s, 'n2', '10.0.0.5')).toEqual([]);
  });
});
