import { describe, expect, it } from 'vitest';
import type { BatchOp } from '../../../controller/intent/batch.js';
import type { RouterFloatingIp } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest, seedExternal } from './router-fixture.js';

/**
 * Floating IPs (stateless 1:1 NAT): red's networks web 10.0.0.0/24, db 10.0.1.0/24 and ext
 * 10.3.0.0/24 (the external one); r1 is on web (10.0.0.1) and ext (10.3.0.1). Endpoint vm holds
 * 10.0.0.5 on web; 10.0.0.77 is a host no endpoint holds.
 */

let svc: IntentService;
redBlueEachTest((s) => {
  svc = s;
}, seedExternal);

const interfaces = [
  { networkId: 'web', ip: '10.0.0.1' },
  { networkId: 'ext', ip: '10.3.0.1' },
];
const fip = (ip: string, fixedIp: string): RouterFloatingIp => ({ ip, fixedIp });
const toVm = fip('10.3.0.50', '10.0.0.5');
const put = (...floatingIps: RouterFloatingIp[]) =>
  svc.put('router', 'r1', { tenantId: 'red', name: 'r1', interfaces, floatingIps });
/** The stored router (with its revision), to show a refused write changed nothing. */
const snapshot = () => structuredClone(svc.get('router', 'r1'));

describe('floating IPs: accepted', () => {
  it('stores them in the order given; absent when none; PATCH of others keeps them; a PATCH replaces; [] removes', async () => {
    const bare = await svc.put('router', 'r1', { tenantId: 'red', interfaces });
    expect('floatingIps' in bare.object).toBe(false);
    const { object } = await put(toVm, fip('10.3.0.51', '10.0.0.77'));
    expect(object.floatingIps).toEqual([toVm, fip('10.3.0.51', '10.0.0.77')]);
    expect(svc.get('router', 'r1')).toEqual(object);
    // Written again: nothing changes (same revision).
    expect((await put(toVm, fip('10.3.0.51', '10.0.0.77'))).revision).toBe(object.revision);
    const renamed = await svc.update('router', 'r1', { name: 'renamed' });
    expect(renamed.object.floatingIps).toEqual(object.floatingIps);
    const replaced = await svc.update('router', 'r1', { floatingIps: [fip('10.3.0.60', '10.0.0.5')] });
    expect(replaced.object.floatingIps).toEqual([fip('10.3.0.60', '10.0.0.5')]);
    const cleared = await svc.update('router', 'r1', { floatingIps: [] });
    expect('floatingIps' in cleared.object).toBe(false);
    expect('floatingIps' in svc.get('router', 'r1')).toBe(false);
    // Created with [] (POST): absent too; a PUT without them drops them.
    const made = await svc.create('router', { tenantId: 'blue', floatingIps: [] });
    expect('floatingIps' in made.object).toBe(false);
    await put(toVm);
    const dropped = await svc.put('router', 'r1', { tenantId: 'red', interfaces });
    expect('floatingIps' in dropped.object).toBe(false);
  });

  it('takes a fixed address no endpoint holds (a host behind a VLAN binding), and a floating IP on any of its networks', async () => {
    expect(svc.list('endpoint').items.flatMap((e) => e.ips)).not.toContain('10.0.0.77');
    const { object } = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [...interfaces, { networkId: 'db', ip: '10.0.1.1' }],
      floatingIps: [fip('10.3.0.50', '10.0.0.77'), fip('10.0.1.50', '10.0.0.5')],
    });
    expect(object.floatingIps).toEqual([fip('10.3.0.50', '10.0.0.77'), fip('10.0.1.50', '10.0.0.5')]);
  });

  it('takes either address of a /31 (no network or broadcast address there)', async () => {
    await svc.put('network', 'p2p', { tenantId: 'red', name: 'p2p', subnets: ['10.4.0.0/31'] });
    const { object } = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1' },
        { networkId: 'p2p', ip: '10.4.0.0' },
      ],
      floatingIps: [fip('10.4.0.1', '10.0.0.5')],
    });
    expect(object.floatingIps).toEqual([fip('10.4.0.1', '10.0.0.5')]);
  });

  it('lets the endpoint holding a fixed address go, and another take it; the floating IP stays', async () => {
    await put(toVm);
    await svc.delete('endpoint', 'vm');
    expect(svc.get('router', 'r1').floatingIps).toEqual([toVm]);
    await svc.put('endpoint', 'vm2', { networkId: 'web', ips: ['10.0.0.5'] });
    expect(svc.get('router', 'r1').floatingIps).toEqual([toVm]);
  });
});

describe('floating IPs: refused, naming the field; nothing changes', () => {
  /** Each case: the entries, the field, the code and the message. */
  const refuse = async (
    entries: RouterFloatingIp[],
    field: string,
    code: 'invalid' | 'conflict',
    message: RegExp,
  ) => {
    const before = snapshot();
    const e = await rejects(put(...entries), code, message);
    expect(e.field).toBe(field);
    expect(svc.get('router', 'r1')).toEqual(before);
  };
  const ipAt = (i: number) => `floatingIps[${i}].ip`;
  const fixedAt = (i: number) => `floatingIps[${i}].fixedIp`;

  it('refuses what is not an IPv4 address, saying IPv6 is routed without NAT', async () => {
    await put();
    await refuse(
      [fip('nope', '10.0.0.5')],
      ipAt(0),
      'invalid',
      /^floatingIps\[0\]\.ip: 'nope' is not an IPv4 address$/,
    );
    await refuse(
      [fip('10.3.0.50', '10.0.0.300')],
      fixedAt(0),
      'invalid',
      /'10\.0\.0\.300' is not an IPv4 address$/,
    );
    const v6 =
      /^floatingIps\[0\]\.ip: fd00::5 is IPv6; floating IPs are IPv4 \(IPv6 is routed without NAT\)$/;
    await refuse([fip('FD00:0::5', '10.0.0.5')], ipAt(0), 'invalid', v6);
    await refuse(
      [fip('10.3.0.50', '::ffff:10.0.0.5')],
      fixedAt(0),
      'invalid',
      /::ffff:a00:5 is IPv6; floating IPs are IPv4/,
    );
  });

  it('refuses a floating IP outside the router networks, unusable there, or the router address', async () => {
    await put();
    await refuse(
      [fip('192.168.0.9', '10.0.0.5')],
      ipAt(0),
      'invalid',
      /^floatingIps\[0\]\.ip: 192\.168\.0\.9 is outside the IPv4 subnets of the router's networks \(10\.0\.0\.0\/24, 10\.3\.0\.0\/24\); the floating IP must be on one of them$/,
    );
    // db exists but the router is not on it.
    await refuse(
      [fip('10.0.1.9', '10.0.0.5')],
      ipAt(0),
      'invalid',
      /10\.0\.1\.9 is outside the IPv4 subnets/,
    );
    await refuse(
      [fip('10.3.0.0', '10.0.0.5')],
      ipAt(0),
      'invalid',
      /10\.3\.0\.0 is the network address of 10\.3\.0\.0\/24, not a usable address$/,
    );
    await refuse(
      [fip('10.3.0.255', '10.0.0.5')],
      ipAt(0),
      'invalid',
      /10\.3\.0\.255 is the broadcast address of 10\.3\.0\.0\/24/,
    );
    await refuse(
      [fip('10.3.0.1', '10.0.0.5')],
      ipAt(0),
      'invalid',
      /10\.3\.0\.1 is this router's own address on network 'ext'$/,
    );
  });

  it('refuses a floating IP listed twice, or the next hop of one of its routes', async () => {
    await put();
    await refuse(
      [toVm, fip('10.3.0.50', '10.0.0.77')],
      ipAt(1),
      'invalid',
      /^floatingIps\[1\]\.ip: 10\.3\.0\.50 is already floatingIps\[0\]\.ip; list each once$/,
    );
    const before = snapshot();
    const e = await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces,
        routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.50' }],
        floatingIps: [toVm],
      }),
      'invalid',
      /10\.3\.0\.50 is the next hop of routes\[0\] \(0\.0\.0\.0\/0\); the router answers for a floating IP itself/,
    );
    expect(e.field).toBe(ipAt(0));
    expect(svc.get('router', 'r1')).toEqual(before);
  });

  it("refuses an endpoint's address or an exact allowed address (a VIP) as a floating IP (409, naming the endpoint)", async () => {
    await put();
    await svc.put('endpoint', 'gw', { networkId: 'ext', ips: ['10.3.0.9'] });
    await svc.put('endpoint', 'ka', {
      networkId: 'ext',
      ips: ['10.3.0.10'],
      allowedAddresses: ['10.3.0.60'],
    });
    await refuse(
      [fip('10.3.0.9', '10.0.0.5')],
      ipAt(0),
      'conflict',
      /^floatingIps\[0\]\.ip: 10\.3\.0\.9 is already used by endpoint 'gw' in network 'ext'$/,
    );
    await refuse(
      [fip('10.3.0.60', '10.0.0.5')],
      ipAt(0),
      'conflict',
      /10\.3\.0\.60 is an allowed address \(a VIP\) of endpoint 'ka' in network 'ext'; the router answers ARP for a floating IP$/,
    );
  });

  it('refuses a fixed address outside, unusable, on the floating IP network, or the router address', async () => {
    await put();
    await refuse(
      [fip('10.3.0.50', '10.9.0.5')],
      fixedAt(0),
      'invalid',
      /^floatingIps\[0\]\.fixedIp: 10\.9\.0\.5 is outside the IPv4 subnets of the router's networks \(10\.0\.0\.0\/24, 10\.3\.0\.0\/24\); the fixed address must be on one of them$/,
    );
    await refuse(
      [fip('10.3.0.50', '10.0.0.255')],
      fixedAt(0),
      'invalid',
      /10\.0\.0\.255 is the broadcast address of 10\.0\.0\.0\/24/,
    );
    await refuse(
      [fip('10.3.0.50', '10.0.0.1')],
      fixedAt(0),
      'invalid',
      /10\.0\.0\.1 is this router's own address on network 'web'$/,
    );
    await refuse(
      [fip('10.3.0.50', '10.3.0.7')],
      fixedAt(0),
      'invalid',
      /^floatingIps\[0\]\.fixedIp: 10\.3\.0\.7 is in network 'ext' like the floating IP 10\.3\.0\.50; the router does not NAT within one network/,
    );
  });

  it('refuses a fixed address that is a floating IP of the router, or the fixed address of two entries', async () => {
    await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [...interfaces, { networkId: 'db', ip: '10.0.1.1' }],
    });
    const before = snapshot();
    const e = await rejects(
      svc.update('router', 'r1', {
        floatingIps: [fip('10.3.0.50', '10.0.1.50'), fip('10.0.1.50', '10.0.0.5')],
      }),
      'invalid',
      /^floatingIps\[0\]\.fixedIp: 10\.0\.1\.50 is floatingIps\[1\]\.ip, a floating IP of this router; a fixed address is a host behind it$/,
    );
    expect(e.field).toBe(fixedAt(0));
    const twice = await rejects(
      svc.update('router', 'r1', { floatingIps: [toVm, fip('10.0.1.50', '10.0.0.5')] }),
      'invalid',
      /^floatingIps\[1\]\.fixedIp: 10\.0\.0\.5 is already floatingIps\[0\]\.fixedIp; one floating IP per fixed address \(the source rewrite must be unambiguous\)$/,
    );
    expect(twice.field).toBe(fixedAt(1));
    expect(svc.get('router', 'r1')).toEqual(before);
  });

  it('refuses more than 256 entries and unknown fields by shape; the service keeps serving', async () => {
    const many = Array.from({ length: 257 }, (_, i) => fip(`10.3.0.${i}`, '10.0.0.5'));
    const e = await rejects(put(...many), 'invalid');
    expect(e.field).toBe('floatingIps');
    const extra = await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces,
        floatingIps: [{ ...toVm, port: 80 } as RouterFloatingIp],
      }),
      'invalid',
      /^floatingIps\[0\]\.port: is not a known field$/,
    );
    expect(extra.field).toBe('floatingIps[0].port');
    expect(svc.find('router', 'r1')).toBeUndefined();
    expect((await put(toVm)).object.floatingIps).toEqual([toVm]);
  });
});

describe('floating IPs: later writes to other objects keep them valid', () => {
  it("refuses an endpoint taking a floating IP (create or update); the fixed address's holder is normal", async () => {
    await put(toVm);
    const message = /^ips\[0\]: 10\.3\.0\.50 is a floating IP of router 'r1' on network 'ext'$/;
    const e = await rejects(
      svc.put('endpoint', 'thief', { networkId: 'ext', ips: ['10.3.0.50'] }),
      'conflict',
      message,
    );
    expect(e.field).toBe('ips[0]');
    expect(svc.find('endpoint', 'thief')).toBeUndefined();
    await svc.put('endpoint', 'other', { networkId: 'ext', ips: ['10.3.0.51'] });
    await rejects(svc.update('endpoint', 'other', { ips: ['10.3.0.50'] }), 'conflict', message);
    expect(svc.get('endpoint', 'other').ips).toEqual(['10.3.0.51']);
    // A floating IP no longer listed is free again.
    await svc.update('router', 'r1', { floatingIps: [] });
    expect((await svc.update('endpoint', 'other', { ips: ['10.3.0.50'] })).object.ips).toEqual(['10.3.0.50']);
  });

  it('refuses a floating IP as an exact allowed address; a prefix holding it is fine', async () => {
    await put(toVm);
    const e = await rejects(
      svc.put('endpoint', 'ka', { networkId: 'ext', ips: ['10.3.0.10'], allowedAddresses: ['10.3.0.50/32'] }),
      'conflict',
      /^allowedAddresses\[0\]: 10\.3\.0\.50 is a floating IP of router 'r1' on network 'ext'; the router answers ARP for it$/,
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

  it("refuses new subnets leaving a floating or fixed address outside or unusable, naming the router's entry", async () => {
    await put(fip('10.3.0.100', '10.0.0.200'), fip('10.3.0.63', '10.0.0.5'));
    const ext = svc.get('network', 'ext');
    const e = await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/26'] }),
      'invalid',
      /^subnets: 10\.3\.0\.100, the floating IP of floatingIps\[0\] \(10\.3\.0\.100 -> 10\.0\.0\.200\) of router 'r1', would be outside the IPv4 subnets \(10\.3\.0\.0\/26\)/,
    );
    expect(e.field).toBe('subnets');
    await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/26', '10.3.0.100/30'] }),
      'invalid',
      /^subnets: 10\.3\.0\.100, the floating IP of floatingIps\[0\] .* would be the network address of 10\.3\.0\.100\/30; change the router's floatingIps first$/,
    );
    await rejects(
      svc.update('network', 'web', { subnets: ['10.0.0.0/25'] }),
      'invalid',
      /^subnets: 10\.0\.0\.200, the fixed address of floatingIps\[0\] \(10\.3\.0\.100 -> 10\.0\.0\.200\) of router 'r1', would be outside/,
    );
    expect(svc.get('network', 'ext')).toEqual(ext);
    // Keeping every address usable is fine.
    const wider = await svc.update('network', 'ext', { subnets: ['10.3.0.0/24', '10.5.0.0/24'] });
    expect(wider.object.subnets).toEqual(['10.3.0.0/24', '10.5.0.0/24']);
    await svc.update('router', 'r1', { floatingIps: [fip('10.3.0.63', '10.0.0.5')] });
    await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/26'] }),
      'invalid',
      /^subnets: 10\.3\.0\.63, the floating IP of floatingIps\[0\] .* would be the broadcast address of 10\.3\.0\.0\/26/,
    );
  });

  it('refuses removing the interface on a network holding a floating or fixed address, unless floatingIps change too', async () => {
    await put(toVm);
    const before = snapshot();
    const gone = await rejects(
      svc.update('router', 'r1', { interfaces: [{ networkId: 'web' }] }),
      'invalid',
      /^interfaces: network 'ext' holds 10\.3\.0\.50, the floating IP of floatingIps\[0\] \(10\.3\.0\.50 -> 10\.0\.0\.5\); keep its interface or change floatingIps in the same write$/,
    );
    expect(gone.field).toBe('interfaces');
    await rejects(
      svc.update('router', 'r1', { interfaces: [{ networkId: 'ext' }] }),
      'invalid',
      /^interfaces: network 'web' holds 10\.0\.0\.5, the fixed address of floatingIps\[0\]/,
    );
    expect(svc.get('router', 'r1')).toEqual(before);
    const both = await svc.update('router', 'r1', { interfaces: [{ networkId: 'web' }], floatingIps: [] });
    expect(both.object.interfaces.map((x) => x.networkId)).toEqual(['web']);
    expect('floatingIps' in both.object).toBe(false);
  });
});

describe('floating IPs in a batch', () => {
  const router = (floatingIps: RouterFloatingIp[]): BatchOp => ({
    op: 'replace',
    kind: 'router',
    id: 'r1',
    body: { tenantId: 'red', interfaces, floatingIps },
  });

  it('writes a router with floating IPs and a fixed address host in one commit', async () => {
    const r = await svc.batch([
      { op: 'create', kind: 'endpoint', id: 'db1', body: { networkId: 'web', ips: ['10.0.0.9'] } },
      router([toVm, fip('10.3.0.51', '10.0.0.9')]),
    ]);
    expect(r.committed).toBe(true);
    expect(svc.get('router', 'r1').floatingIps).toEqual([toVm, fip('10.3.0.51', '10.0.0.9')]);
  });

  it('refuses an endpoint taking a floating IP later in the same batch; nothing is written', async () => {
    const e = await rejects(
      svc.batch([
        router([toVm]),
        { op: 'create', kind: 'endpoint', id: 'thief', body: { networkId: 'ext', ips: ['10.3.0.50'] } },
      ]),
      'conflict',
      /^ops\[1\] \(endpoint 'thief'\): ips\[0\]: 10\.3\.0\.50 is a floating IP of router 'r1' on network 'ext'$/,
    );
    expect(e.field).toBe('ops[1].body.ips[0]');
    expect(svc.find('router', 'r1')).toBeUndefined();
    expect(svc.find('endpoint', 'thief')).toBeUndefined();
  });
});
