import type { IntentService } from '../../../controller/intent/service.js';

/**
 * An intent with every exportable kind and what makes exporting it hard: security groups naming
 * each other in a cycle (and one itself), an endpoint behind them with QoS and allowed
 * addresses, a router whose static route, floating IP and port forward point at endpoints, a
 * VLAN binding on a chassis, a mirror, DHCP, IPv6, and tenant blue reusing red's addresses.
 */
export async function seedEverything(svc: IntentService): Promise<void> {
  await svc.put('tenant', 'red', {
    name: 'red',
    description: 'the red team',
    qos: { dscp: 10 },
    quotas: { networks: 10, mirrors: 1 },
  });
  await svc.put('tenant', 'blue', { name: 'blue' });
  await svc.put('chassis', 'hv1', { name: 'hv1', tunnelIp: '192.168.90.1', offload: 'asap2' });
  await svc.put('chassis', 'hv2', { name: 'hv2', tunnelIp: '192.168.90.2', underlayMtu: 9000 });
  await svc.put('network', 'web', {
    tenantId: 'red',
    name: 'web',
    vni: 5001,
    subnets: ['10.0.0.0/24', 'fd00:1::/64'],
    dhcp: { enabled: true, dnsServers: ['10.0.0.53'], domainName: 'red.example', ipv6: true },
  });
  await svc.put('network', 'db', { tenantId: 'red', name: 'db', mtu: 1400, subnets: ['10.0.1.0/24'] });
  await svc.put('network', 'ext', { tenantId: 'red', name: 'ext', subnets: ['10.3.0.0/24'] });
  await svc.put('network', 'bnet', { tenantId: 'blue', name: 'bnet', subnets: ['10.0.0.0/24'] });
  // Written in an order export cannot copy: z first, then a naming z and itself, then z naming a.
  const tcpFrom = (port: number, remoteGroupId: string) =>
    ({
      direction: 'ingress',
      ethertype: 'ipv4',
      protocol: 'tcp',
      portMin: port,
      portMax: port,
      remoteGroupId,
    }) as const;
  const group = (id: string, rules: object[], log?: 'denied') =>
    svc.put('securityGroup', id, {
      tenantId: 'red',
      name: id,
      rules: rules as never,
      ...(log ? { log } : {}),
    });
  await group('z', []);
  await group('a', [
    tcpFrom(22, 'z'),
    { direction: 'ingress', ethertype: 'ipv4', protocol: 'any', remoteGroupId: 'a' },
  ]);
  // z logs what its endpoints' policy drops: export must carry `log` across.
  await group(
    'z',
    [
      tcpFrom(5432, 'a'),
      { direction: 'egress', ethertype: 'ipv4', protocol: 'any', remoteCidr: '0.0.0.0/0' },
    ],
    'denied',
  );
  await svc.put('networkAcl', 'no-dns', {
    tenantId: 'red',
    networkId: 'web',
    priority: 100,
    direction: 'ingress',
    action: 'drop',
    protocol: 'udp',
    portMin: 53,
    portMax: 53,
  });
  await svc.put('endpoint', 'vm', {
    networkId: 'web',
    ips: ['10.0.0.5', 'fd00:1::5'],
    securityGroupIds: ['a'],
    qos: { egress: { kbps: 10000, burstKb: 2000 }, dscp: 46 },
    allowedAddresses: ['10.0.0.100'],
  });
  await svc.put('endpoint', 'fw', {
    name: 'firewall',
    networkId: 'web',
    ips: ['10.0.0.9'],
    portSecurity: false,
  });
  await svc.put('endpoint', 'dbvm', { networkId: 'db', ips: ['10.0.1.5'], securityGroupIds: ['z'] });
  await svc.put('endpoint', 'ids', { networkId: 'db', ips: ['10.0.1.6'], ifaceId: 'tap-ids' });
  await svc.put('endpoint', 'bvm', { networkId: 'bnet', ips: ['10.0.0.5'] });
  await svc.put('vlanBinding', 'metal', { chassisId: 'hv1', port: 'eth1', vlan: 100, networkId: 'ext' });
  await svc.put('router', 'r1', {
    tenantId: 'red',
    interfaces: [
      { networkId: 'web', ip: '10.0.0.1', ipv6: 'fd00:1::1' },
      { networkId: 'db' },
      { networkId: 'ext', ip: '10.3.0.1' },
    ],
    routes: [{ destination: '192.168.0.0/16', nexthop: '10.0.0.9' }],
    floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }],
    snat: {
      ip: '10.3.0.2',
      portForwards: [{ protocol: 'tcp', port: 8080, internalIp: '10.0.1.5', internalPort: 80 }],
    },
  });
  await svc.put('mirror', 'tap', { source: 'dbvm', destination: 'ids', direction: 'egress' });
  await svc.createToken('red', 'ci');
}
