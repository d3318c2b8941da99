import { type CliCommand, UsageError } from '../../controller/cli/command.js';
import { type Column, col } from './format.js';
import { mirrorCli } from './mirror-cli.js';
import { checkQos, qosColumn, qosFlags, qosMerge, qosText } from './qos-flags.js';
import { quotaFlag, quotasText, tenantStatusText } from './quota-flags.js';
import { type FieldFlag, type ResourceCli, resourceCommand } from './resource-command.js';
import { routerCli } from './router-cli.js';
import { aclPortsColumn, icmpFlags, parseRule, ports, rulesOf } from './rule-flags.js';
import { aclLogColumn, aclLogFlag, sgLogColumn, sgLogFlag } from './sg-log-flag.js';

const revision = col('REV', 'revision');

/** `weft chassis offload ID`: the share in software, the reasons by count, a few examples. */
export const offloadText = (o: Record<string, unknown>): string => {
  const total = o.totalFlows as number;
  const soft = o.softwareFlows as number;
  const pct = total === 0 ? 0 : (100 * soft) / total;
  const lines = [
    `chassis ${o.chassisId} (profile ${o.profile}): ${soft} of ${total} flows would stay in software (${pct.toFixed(1)}%)`,
  ];
  const reasons = Object.entries((o.reasons as Record<string, number>) ?? {}).sort((a, b) => b[1] - a[1]);
  if (reasons.length > 0)
    lines.push('', 'why:', ...reasons.map(([why, n]) => `  ${String(n).padStart(6)}  ${why}`));
  const examples = (o.examples as Array<{ flow: string; reasons: string[] }>) ?? [];
  if (examples.length > 0)
    lines.push('', 'for example:', ...examples.map((x) => `  ${x.flow}\n      ${x.reasons.join('; ')}`));
  return `${lines.join('\n')}\n`;
};

/**
 * `--dhcp on|off|router=IP,dns=IP+IP,domain=NAME,lease=SECONDS,ipv6=on`: the network's whole
 * `dhcp` member (weft answers its endpoints' DHCP requests; ipv6=on: DHCPv6 too); any key=value
 * form means on.
 */
export const parseDhcp = (text: string): Record<string, unknown> => {
  if (text === 'off') return { enabled: false };
  if (text === 'on') return { enabled: true };
  const dhcp: Record<string, unknown> = { enabled: true };
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    const [key, value] = [part.slice(0, eq), part.slice(eq + 1)];
    if (eq < 1 || value === '') throw new UsageError(`--dhcp '${text}': '${part}' is not key=value`);
    if (key === 'router') dhcp.router = value;
    else if (key === 'dns') dhcp.dnsServers = value.split('+');
    else if (key === 'domain') dhcp.domainName = value;
    else if (key === 'ipv6') {
      if (value !== 'on' && value !== 'off') throw new UsageError(`--dhcp: ipv6 '${value}' is not on or off`);
      dhcp.ipv6 = value === 'on';
    } else if (key === 'lease') {
      if (!/^[0-9]{1,9}$/.test(value))
        throw new UsageError(`--dhcp: lease '${value}' is not a number of seconds`);
      dhcp.leaseSeconds = Number(value);
    } else throw new UsageError(`--dhcp: unknown key '${key}' (router, dns, domain, lease, ipv6)`);
  }
  return dhcp;
};

const dhcpFlag: FieldFlag = {
  flag: 'dhcp',
  field: 'dhcp',
  type: 'custom',
  help: 'on | off | router=IP,dns=IP+IP,domain=NAME,lease=SECONDS,ipv6=on (weft serves DHCP; ipv6: DHCPv6 too)',
  parse: (v) => parseDhcp(v.at(-1)!),
};

const dhcpCell = (d: unknown): string => {
  const dhcp = d as { enabled?: boolean; router?: string; ipv6?: boolean } | undefined;
  if (!dhcp?.enabled) return '-';
  const v6 = dhcp.ipv6 ? '+v6' : '';
  return dhcp.router ? `on${v6} (gw ${dhcp.router})` : `on${v6}`;
};

const bound: Column = {
  header: 'BOUND',
  value: (o) => {
    const s = o.status as { bound?: boolean; chassis?: string; ofport?: number } | undefined;
    return s?.bound ? `${s.chassis ?? '?'}:${s.ofport ?? '?'}` : 'no';
  },
};

export const resourceClis: ResourceCli[] = [
  {
    word: 'tenant',
    path: 'tenants',
    noun: 'tenant',
    fields: [
      { flag: 'name', field: 'name', type: 'string', help: 'display name' },
      { flag: 'description', field: 'description', type: 'string', help: 'free text' },
      // The tenant's default rate limits: every endpoint of it without its own is held to them.
      ...qosFlags,
      quotaFlag,
    ],
    filters: [],
    columns: [col('ID', 'id'), col('NAME', 'name'), col('DESCRIPTION', 'description'), qosColumn, revision],
    check: checkQos,
    mergeOnUpdate: qosMerge,
    render: { qos: qosText, quotas: quotasText, status: tenantStatusText },
  },
  {
    word: 'network',
    path: 'networks',
    noun: 'network',
    fields: [
      {
        flag: 'tenant',
        field: 'tenantId',
        type: 'string',
        help: 'owning tenant (implied for tenant tokens)',
        createOnly: true,
      },
      { flag: 'name', field: 'name', type: 'string', help: 'display name' },
      {
        flag: 'vni',
        field: 'vni',
        type: 'int',
        help: 'VXLAN VNI 1-16777214 (allocated if absent)',
        createOnly: true,
      },
      { flag: 'mtu', field: 'mtu', type: 'int', help: 'tenant MTU (default: underlay MTU - 50)' },
      { flag: 'subnet', field: 'subnets', type: 'list', help: 'CIDR; repeat or comma-separate' },
      dhcpFlag,
    ],
    filters: ['tenant'],
    columns: [
      col('ID', 'id'),
      col('TENANT', 'tenantId'),
      col('NAME', 'name'),
      col('VNI', 'vni'),
      col('MTU', 'mtu'),
      col('SUBNETS', 'subnets'),
      { header: 'DHCP', value: (o) => dhcpCell(o.dhcp) },
      revision,
    ],
  },
  {
    word: 'endpoint',
    path: 'endpoints',
    noun: 'endpoint',
    fields: [
      {
        flag: 'network',
        field: 'networkId',
        type: 'string',
        help: 'network the NIC is on',
        createOnly: true,
      },
      { flag: 'name', field: 'name', type: 'string', help: 'display name' },
      { flag: 'mac', field: 'mac', type: 'string', help: 'MAC (generated if absent)' },
      { flag: 'ip', field: 'ips', type: 'list', help: 'IP address; repeat or comma-separate' },
      {
        flag: 'iface-id',
        field: 'ifaceId',
        type: 'string',
        help: 'OVS external_ids:iface-id (default: the id)',
      },
      {
        flag: 'security-group',
        field: 'securityGroupIds',
        type: 'list',
        help: 'security group id; repeatable',
      },
      {
        flag: 'allowed-address',
        field: 'allowedAddresses',
        type: 'list',
        help: "extra source address or CIDR (a VIP); repeat or comma-separate; '' clears",
      },
      {
        flag: 'port-security',
        field: 'portSecurity',
        type: 'bool',
        help: 'source MAC/IP checks (default on)',
      },
      ...qosFlags,
    ],
    filters: ['tenant', 'network'],
    columns: [
      col('ID', 'id'),
      col('NETWORK', 'networkId'),
      col('MAC', 'mac'),
      col('IPS', 'ips'),
      col('IFACE-ID', 'ifaceId'),
      bound,
      qosColumn,
      revision,
    ],
    check: checkQos,
    mergeOnUpdate: qosMerge,
    render: { qos: qosText },
    reads: [
      {
        verb: 'flush-connections',
        sub: 'connections',
        method: 'DELETE',
        help: "forget its connections (its conntrack zone on its hypervisor): what is still open meets its security groups' rules again",
        print: (b) => `endpoint ${b.endpointId}: connections forgotten on ${b.chassis} (zone ${b.zone})\n`,
      },
    ],
  },
  {
    word: 'security-group',
    path: 'security-groups',
    noun: 'security group',
    fields: [
      { flag: 'tenant', field: 'tenantId', type: 'string', help: 'owning tenant', createOnly: true },
      { flag: 'name', field: 'name', type: 'string', help: 'display name' },
      {
        flag: 'rule',
        field: 'rules',
        type: 'custom',
        help: 'DIRECTION,ETHERTYPE,PROTOCOL[,PORTS][,remote=CIDR|group=ID]; repeatable, replaces all rules',
        parse: (v) => v.map(parseRule),
      },
      sgLogFlag,
    ],
    filters: ['tenant'],
    columns: [
      col('ID', 'id'),
      col('TENANT', 'tenantId'),
      col('NAME', 'name'),
      sgLogColumn,
      { header: 'RULES', value: rulesOf },
      revision,
    ],
  },
  {
    word: 'acl',
    path: 'acls',
    noun: 'network ACL',
    fields: [
      {
        flag: 'network',
        field: 'networkId',
        type: 'string',
        help: 'network the rule applies to',
        createOnly: true,
      },
      { flag: 'priority', field: 'priority', type: 'int', help: '0-32767, higher first' },
      { flag: 'direction', field: 'direction', type: 'string', help: 'ingress or egress' },
      { flag: 'action', field: 'action', type: 'string', help: 'allow or drop' },
      { flag: 'protocol', field: 'protocol', type: 'string', help: 'tcp, udp, icmp or any' },
      { flag: 'src', field: 'srcCidr', type: 'string', help: 'source CIDR' },
      { flag: 'dst', field: 'dstCidr', type: 'string', help: 'destination CIDR' },
      ports,
      ...icmpFlags,
      aclLogFlag,
    ],
    filters: ['tenant', 'network'],
    columns: [
      col('ID', 'id'),
      col('NETWORK', 'networkId'),
      col('PRIO', 'priority'),
      col('DIR', 'direction'),
      col('ACTION', 'action'),
      col('PROTO', 'protocol'),
      col('SRC', 'srcCidr'),
      col('DST', 'dstCidr'),
      aclPortsColumn,
      aclLogColumn,
      revision,
    ],
  },
  {
    word: 'chassis',
    path: 'chassis',
    noun: 'chassis',
    plural: 'chassis',
    fields: [
      { flag: 'name', field: 'name', type: 'string', help: 'display name' },
      { flag: 'tunnel-ip', field: 'tunnelIp', type: 'string', help: 'VXLAN tunnel endpoint address' },
      { flag: 'bridge', field: 'bridge', type: 'string', help: 'integration bridge (default br-int)' },
      { flag: 'datapath-type', field: 'datapathType', type: 'string', help: 'system or netdev' },
      { flag: 'offload', field: 'offload', type: 'string', help: 'none or asap2' },
      { flag: 'underlay-mtu', field: 'underlayMtu', type: 'int', help: 'underlay MTU (default 1500)' },
    ],
    filters: [],
    columns: [
      col('ID', 'id'),
      col('NAME', 'name'),
      col('TUNNEL-IP', 'tunnelIp'),
      col('BRIDGE', 'bridge'),
      col('DATAPATH', 'datapathType'),
      col('OFFLOAD', 'offload'),
      col('MTU', 'underlayMtu'),
      revision,
    ],
    reads: [
      {
        verb: 'offload',
        sub: 'offload',
        help: 'which of its flows ASAP2 / TC flower would leave in software, and why',
        print: offloadText,
      },
    ],
  },
  {
    word: 'vlan-binding',
    path: 'vlan-bindings',
    noun: 'VLAN binding',
    fields: [
      {
        flag: 'chassis',
        field: 'chassisId',
        type: 'string',
        help: 'chassis the physical port is on',
        createOnly: true,
      },
      { flag: 'port', field: 'port', type: 'string', help: 'physical port name' },
      { flag: 'vlan', field: 'vlan', type: 'int', help: 'VLAN id 1-4094' },
      { flag: 'network', field: 'networkId', type: 'string', help: 'network (VNI) the VLAN maps to' },
    ],
    filters: ['network'],
    columns: [
      col('ID', 'id'),
      col('CHASSIS', 'chassisId'),
      col('PORT', 'port'),
      col('VLAN', 'vlan'),
      col('NETWORK', 'networkId'),
      revision,
    ],
  },
  routerCli,
  mirrorCli,
  {
    word: 'token',
    path: 'tokens',
    noun: 'API token',
    verbs: ['create', 'list', 'show', 'delete'],
    fields: [
      { flag: 'tenant', field: 'tenantId', type: 'string', help: 'tenant the token is confined to' },
      {
        flag: 'admin',
        field: 'tenantId',
        type: 'flag',
        help: 'an admin token (tenantId null)',
        parse: () => null,
      },
      { flag: 'name', field: 'name', type: 'string', help: 'what the token is for' },
    ],
    filters: ['tenant'],
    columns: [col('ID', 'id'), col('TENANT', 'tenantId'), col('NAME', 'name'), col('CREATED', 'createdAt')],
  },
];

export const resourceCommands: CliCommand[] = resourceClis.map(resourceCommand);
