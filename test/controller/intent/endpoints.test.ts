import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
  await svc.put('tenant', 't2', { name: 'two' });
  await svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24', 'fd00::/64'] });
  await svc.put('network', 'open', { tenantId: 't1', name: 'no subnets' });
  await svc.put('securityGroup', 'sg1', { tenantId: 't1', name: 'web' });
  await svc.put('securityGroup', 'sg2', { tenantId: 't2', name: 'other tenant' });
});
afterEach(() => h.close());

describe('endpoints', () => {
  it('fills defaults: generated locally administered MAC, ifaceId = id, port security on, tenant of the network', async () => {
    const { object } = await svc.create('endpoint', { id: 'vm1', networkId: 'n1' });
    expect(object).toMatchObject({
      id: 'vm1',
      tenantId: 't1',
      networkId: 'n1',
      ifaceId: 'vm1',
      ips: [],
      securityGroupIds: [],
      portSecurity: true,
    });
    expect(object.mac).toMatch(/^02(:[0-9a-f]{2}){5}$/);
  });

  it('generates distinct MACs', async () => {
    const macs = new Set<string>();
    for (let i = 0; i < 200; i++) macs.add((await svc.create('endpoint', { networkId: 'open' })).object.mac);
    expect(macs.size).toBe(200);
  });

  it('normalises MACs and refuses multicast, zero, malformed and duplicate-in-network ones', async () => {
    expect((await svc.create('endpoint', { networkId: 'n1', mac: '0A:00:00:00:00:01' })).object.mac).toBe(
      '0a:00:00:00:00:01',
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', mac: '0a:00:00:00:00:01' }),
      'conflict',
      /^mac: 0a:00:00:00:00:01 is already used in network 'n1'/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', mac: '01:00:5e:00:00:01' }),
      'invalid',
      /^mac: .*multicast/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', mac: '00:00:00:00:00:00' }),
      'invalid',
      /^mac: the all-zero/,
    );
    await rejects(svc.create('endpoint', { networkId: 'n1', mac: '0a-00-00-00-00-01' }), 'invalid', /^mac: /);
    // The same MAC in another network is fine.
    await svc.create('endpoint', { networkId: 'open', mac: '0a:00:00:00:00:01' });
  });

  it('keeps IPs inside the network subnets, unique per network, canonical', async () => {
    const e = await svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.5', 'FD00::0:5'] });
    expect(e.object.ips).toEqual(['10.0.0.5', 'fd00::5']);
    await rejects(
      svc.create('endpoint', { networkId: 'n1', ips: ['10.0.1.5'] }),
      'conflict',
      /^ips\[0\]: 10.0.1.5 is outside the subnets of network 'n1'/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.6', 'fd00::5'] }),
      'conflict',
      /^ips\[1\]: fd00::5 is already used in network 'n1'/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.7', '10.0.0.7'] }),
      'invalid',
      /^ips\[1\]: 10.0.0.7 is listed twice/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.300'] }),
      'invalid',
      /^ips\[0\]: '10.0.0.300' is not an IPv4 or IPv6 address/,
    );
    // Without subnets any address goes; the same address in another network too.
    await svc.create('endpoint', { networkId: 'open', ips: ['10.0.0.5', '198.51.100.1'] });
  });

  it('frees an address and a MAC when the endpoint changes them', async () => {
    await svc.put('endpoint', 'a', { networkId: 'n1', ips: ['10.0.0.5'], mac: '0a:00:00:00:00:05' });
    await svc.update('endpoint', 'a', { ips: ['10.0.0.6'], mac: '0a:00:00:00:00:06' });
    await svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.5'], mac: '0a:00:00:00:00:05' });
    await rejects(svc.create('endpoint', { networkId: 'n1', ips: ['10.0.0.6'] }), 'conflict', /already used/);
  });

  it('keeps ifaceId unique across networks', async () => {
    await svc.create('endpoint', { networkId: 'n1', ifaceId: 'tap-1' });
    await rejects(
      svc.create('endpoint', { networkId: 'open', ifaceId: 'tap-1' }),
      'conflict',
      /^ifaceId: 'tap-1' is already bound to endpoint/,
    );
  });

  it('needs an existing network of the same tenant and existing security groups of that tenant', async () => {
    await rejects(
      svc.create('endpoint', { networkId: 'ghost' }),
      'invalid',
      /^networkId: network 'ghost' does not exist/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', tenantId: 't2' }),
      'invalid',
      /^tenantId: must be the network's tenant 't1'/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', securityGroupIds: ['nope'] }),
      'invalid',
      /^securityGroupIds\[0\]: securityGroup 'nope' does not exist/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', securityGroupIds: ['sg2'] }),
      'invalid',
      /^securityGroupIds\[0\]: .*belongs to tenant 't2', not 't1'/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', securityGroupIds: ['sg1', 'sg1'] }),
      'invalid',
      /^securityGroupIds\[1\]: 'sg1' is listed twice/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n1', securityGroupIds: ['sg1'], portSecurity: false }),
      'invalid',
      /^portSecurity: security groups need port security/,
    );
    const ok = await svc.create('endpoint', { networkId: 'n1', securityGroupIds: ['sg1'] });
    expect(ok.object.securityGroupIds).toEqual(['sg1']);
  });

  it('cannot move to another network', async () => {
    await svc.put('endpoint', 'e', { networkId: 'n1' });
    await rejects(
      svc.put('endpoint', 'e', { networkId: 'open' }),
      'invalid',
      /^networkId: cannot change from 'n1' to 'open'/,
    );
  });

  it('keeps a PUT without mac on the existing MAC; a repeated PUT writes nothing', async () => {
    const first = await svc.put('endpoint', 'e', { networkId: 'n1', ips: ['10.0.0.9'] });
    const rev = svc.revision();
    const again = await svc.put('endpoint', 'e', { networkId: 'n1', ips: ['10.0.0.9'] });
    expect(again).toEqual(first);
    expect(svc.revision()).toBe(rev);
    const patched = await svc.update('endpoint', 'e', { name: 'web-1' });
    expect(patched.object).toMatchObject({ mac: first.object.mac, name: 'web-1', revision: rev + 1 });
    const same = await svc.update('endpoint', 'e', { name: 'web-1' });
    expect(same.revision).toBe(rev + 1);
  });
});
