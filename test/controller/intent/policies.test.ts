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
  await svc.put('network', 'n1', { tenantId: 't1', name: 'n1' });
  await svc.put('securityGroup', 'other', { tenantId: 't2', name: 'other' });
});
afterEach(() => h.close());

const tcp = { direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp' } as const;

describe('security groups', () => {
  it('gives rules ids, defaults portMax to portMin and normalises CIDRs', async () => {
    const { object } = await svc.create('securityGroup', {
      tenantId: 't1',
      name: 'web',
      rules: [
        { ...tcp, portMin: 443, remoteCidr: '0.0.0.0/0' },
        { id: 'ssh', ...tcp, portMin: 22, portMax: 22 },
      ],
    });
    expect(object.rules[0]).toMatchObject({ portMin: 443, portMax: 443, remoteCidr: '0.0.0.0/0' });
    expect(object.rules[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(object.rules[1]!.id).toBe('ssh');
  });

  it('refuses bad rules, naming the rule and field', async () => {
    const bad = async (rule: object, re: RegExp) =>
      rejects(
        svc.create('securityGroup', { tenantId: 't1', name: 'x', rules: [rule as never] }),
        'invalid',
        re,
      );
    await bad(
      { ...tcp, protocol: 'icmp', portMin: 1 },
      /^rules\[0\]\.portMin: port ranges need protocol tcp or udp, not icmp/,
    );
    await bad({ ...tcp, portMin: 90, portMax: 80 }, /^rules\[0\]\.portMin: 90 is greater than portMax 80/);
    await bad({ ...tcp, portMax: 80 }, /^rules\[0\]\.portMin: is required with portMax/);
    await bad({ ...tcp, remoteCidr: 'fd00::/8' }, /^rules\[0\]\.remoteCidr: is IPv6 but the rule is IPv4/);
    await bad({ ...tcp, remoteCidr: '10.0.0.1/8' }, /^rules\[0\]\.remoteCidr: .*host bits/);
    await bad(
      { ...tcp, remoteGroupId: 'ghost' },
      /^rules\[0\]\.remoteGroupId: securityGroup 'ghost' does not exist/,
    );
    await bad({ ...tcp, remoteGroupId: 'other' }, /^rules\[0\]\.remoteGroupId: .*belongs to tenant 't2'/);
    await bad(
      { ...tcp, remoteCidr: '10.0.0.0/8', remoteGroupId: 'other' },
      /^rules\[0\]\.remoteGroupId: give remoteCidr or remoteGroupId, not both/,
    );
    await bad({ ...tcp, direction: 'sideways' }, /^rules\[0\]\.direction: /);
    await rejects(
      svc.create('securityGroup', {
        tenantId: 't1',
        name: 'x',
        rules: [
          { id: 'r', ...tcp },
          { id: 'r', ...tcp },
        ],
      }),
      'invalid',
      /^rules\[1\]\.id: 'r' is used by two rules/,
    );
  });

  it('keeps log only when given, changes it by PATCH, and refuses an unknown mode naming log', async () => {
    const plain = await svc.create('securityGroup', { tenantId: 't1', name: 'plain' });
    expect(plain.object).not.toHaveProperty('log'); // absent is off: nothing written for it
    const { object } = await svc.create('securityGroup', { tenantId: 't1', name: 'web', log: 'denied' });
    expect(object.log).toBe('denied');
    expect((await svc.update('securityGroup', object.id, { log: 'all' })).object.log).toBe('all');
    // A PATCH of other fields keeps it; 'off' given is kept as given.
    expect((await svc.update('securityGroup', object.id, { name: 'web2' })).object.log).toBe('all');
    expect((await svc.update('securityGroup', object.id, { log: 'off' })).object.log).toBe('off');
    const modes = /^log: must be one of "off", "denied", "accepted", "all"$/;
    await rejects(
      svc.create('securityGroup', { tenantId: 't1', name: 'x', log: 'everything' as never }),
      'invalid',
      modes,
    );
    await rejects(svc.update('securityGroup', object.id, { log: true as never }), 'invalid', modes);
  });

  it('keeps an ICMP type and code on an icmp rule, and refuses them on another protocol or a code alone', async () => {
    const icmp = { direction: 'ingress', ethertype: 'ipv4', protocol: 'icmp' } as const;
    const { object } = await svc.create('securityGroup', {
      tenantId: 't1',
      name: 'ping',
      rules: [
        { id: 'echo', ...icmp, icmpType: 8 },
        { id: 'frag', ...icmp, icmpType: 3, icmpCode: 4 },
        { id: 'echo6', ...icmp, ethertype: 'ipv6', icmpType: 128 },
      ],
    });
    expect(object.rules.map(({ id, icmpType, icmpCode }) => [id, icmpType, icmpCode])).toEqual([
      ['echo', 8, undefined],
      ['frag', 3, 4],
      ['echo6', 128, undefined],
    ]);
    const bad = (rule: object, re: RegExp) =>
      rejects(
        svc.create('securityGroup', { tenantId: 't1', name: 'x', rules: [rule as never] }),
        'invalid',
        re,
      );
    await bad({ ...tcp, icmpType: 8 }, /^rules\[0\]\.icmpType: needs protocol icmp, not tcp/);
    await bad(
      { ...icmp, protocol: 'any', icmpCode: 0 },
      /^rules\[0\]\.icmpCode: needs protocol icmp, not any/,
    );
    await bad({ ...icmp, icmpCode: 0 }, /^rules\[0\]\.icmpCode: needs icmpType/);
    await bad({ ...icmp, icmpType: 256 }, /^rules\/0\/icmpType|rules\.0\.icmpType|icmpType/);
  });

  it('allows a rule naming its own group, and refuses to delete a group still in use', async () => {
    await svc.put('securityGroup', 'db', {
      tenantId: 't1',
      name: 'db',
      rules: [{ ...tcp, remoteGroupId: 'db' }],
    });
    await svc.put('securityGroup', 'app', {
      tenantId: 't1',
      name: 'app',
      rules: [{ ...tcp, remoteGroupId: 'db' }],
    });
    await rejects(
      svc.delete('securityGroup', 'db'),
      'conflict',
      /security group 'db' is still used by 1 securityGroup \(securityGroup\/app\)/,
    );
    await svc.delete('securityGroup', 'app');
    await svc.put('endpoint', 'e', { networkId: 'n1', securityGroupIds: ['db'] });
    await rejects(
      svc.delete('securityGroup', 'db', { cascade: true }),
      'conflict',
      /still used by 1 endpoint \(endpoint\/e\)/,
    );
    await svc.update('endpoint', 'e', { securityGroupIds: [] });
    expect((await svc.delete('securityGroup', 'db')).deleted).toEqual([{ kind: 'securityGroup', id: 'db' }]);
  });
});

describe('network ACLs', () => {
  const acl = {
    networkId: 'n1',
    priority: 100,
    direction: 'ingress',
    action: 'drop',
    protocol: 'udp',
  } as const;
  it('take the tenant of their network and validate addresses and ports', async () => {
    const { object } = await svc.create('networkAcl', { ...acl, srcCidr: '10.0.0.0/8', portMin: 53 });
    expect(object).toMatchObject({ tenantId: 't1', srcCidr: '10.0.0.0/8', portMin: 53, portMax: 53 });
    await rejects(
      svc.create('networkAcl', { ...acl, srcCidr: '10.0.0.0/8', dstCidr: 'fd00::/8' }),
      'invalid',
      /^dstCidr: is IPv6 but the rule is IPv4/,
    );
    await rejects(
      svc.create('networkAcl', { ...acl, protocol: 'any', portMin: 1 }),
      'invalid',
      /^portMin: port ranges need protocol tcp or udp/,
    );
    await rejects(
      svc.create('networkAcl', { ...acl, networkId: 'zz' }),
      'invalid',
      /^networkId: network 'zz' does not exist/,
    );
    const echo = await svc.create('networkAcl', { ...acl, protocol: 'icmp', icmpType: 8, icmpCode: 0 });
    expect(echo.object).toMatchObject({ protocol: 'icmp', icmpType: 8, icmpCode: 0 });
    await rejects(
      svc.create('networkAcl', { ...acl, icmpType: 8 }),
      'invalid',
      /^icmpType: needs protocol icmp, not udp/,
    );
    await rejects(
      svc.create('networkAcl', { ...acl, protocol: 'icmp', icmpCode: 3 }),
      'invalid',
      /^icmpCode: needs icmpType/,
    );
    await rejects(svc.create('networkAcl', { ...acl, priority: 40000 }), 'invalid', /^priority: /);
    await rejects(svc.create('networkAcl', { ...acl, action: 'reject' as never }), 'invalid', /^action: /);
  });

  it('block a network delete unless cascade', async () => {
    await svc.create('networkAcl', acl);
    await rejects(svc.delete('network', 'n1'), 'conflict', /1 networkAcl/);
    expect((await svc.delete('network', 'n1', { cascade: true })).deleted).toHaveLength(2);
  });
});

describe('chassis and VLAN bindings', () => {
  it('fill chassis defaults and keep tunnel IPs unique', async () => {
    const { object } = await svc.create('chassis', { id: 'sys-1', name: 'hv1', tunnelIp: '192.0.2.10' });
    expect(object).toMatchObject({
      bridge: 'br-int',
      datapathType: 'system',
      offload: 'none',
      underlayMtu: 1500,
    });
    await rejects(
      svc.create('chassis', { name: 'hv2', tunnelIp: '192.0.2.10' }),
      'conflict',
      /^tunnelIp: 192.0.2.10 is already chassis 'sys-1'/,
    );
    await rejects(
      svc.create('chassis', { name: 'hv2', tunnelIp: 'nope' }),
      'invalid',
      /^tunnelIp: 'nope' is not/,
    );
    await rejects(
      svc.create('chassis', { name: 'hv2', tunnelIp: '192.0.2.11', offload: 'dpdk' as never }),
      'invalid',
      /^offload: /,
    );
  });

  it('bind a VLAN on a chassis port to a network once, and block chassis deletion', async () => {
    await svc.put('chassis', 'hv1', { name: 'hv1', tunnelIp: '192.0.2.10' });
    const b = await svc.create('vlanBinding', { chassisId: 'hv1', port: 'eth1', vlan: 100, networkId: 'n1' });
    expect(b.object).toMatchObject({ chassisId: 'hv1', port: 'eth1', vlan: 100, networkId: 'n1' });
    await rejects(
      svc.create('vlanBinding', { chassisId: 'hv1', port: 'eth1', vlan: 100, networkId: 'n1' }),
      'conflict',
      /^vlan: VLAN 100 on hv1\/eth1 is already bound/,
    );
    await svc.create('vlanBinding', { chassisId: 'hv1', port: 'eth2', vlan: 100, networkId: 'n1' });
    await rejects(
      svc.create('vlanBinding', { chassisId: 'hv1', port: 'eth1', vlan: 4095, networkId: 'n1' }),
      'invalid',
      /^vlan: /,
    );
    await rejects(
      svc.create('vlanBinding', { chassisId: 'hv9', port: 'eth1', vlan: 5, networkId: 'n1' }),
      'invalid',
      /^chassisId: chassis 'hv9' does not exist/,
    );
    await rejects(
      svc.create('vlanBinding', { chassisId: 'hv1', port: 'eth1', vlan: 5, networkId: 'n9' }),
      'invalid',
      /^networkId: network 'n9' does not exist/,
    );
    await rejects(
      svc.update('vlanBinding', b.object.id, { chassisId: 'x' } as never),
      'invalid',
      /^chassisId: is not a known field/,
    );
    await rejects(svc.delete('chassis', 'hv1'), 'conflict', /chassis 'hv1' still has 2 vlanBindings/);
    expect((await svc.delete('chassis', 'hv1', { cascade: true })).deleted).toHaveLength(3);
  });
});
