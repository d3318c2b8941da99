import { isIP } from 'node:net';
import { UsageError } from '../../controller/cli/command.js';
import type { RouterNeighbors } from '../status.js';
import { col, table } from './format.js';
import {
  checkRouter,
  mergeSnat,
  PORT_FORWARD_EXAMPLE,
  PORT_FORWARD_SYNTAX,
  parsePortForwards,
  type SnatOut,
  snatText,
} from './port-forward-flags.js';
import { EditRefused, type ResourceCli } from './resource-command.js';

/**
 * `weft router ...`: routers between a tenant's networks (with static routes to appliance VMs or
 * physical routers, floating IPs, SNAT and its port forwards), attach/detach of one network, and
 * the neighbour table.
 */

interface InterfaceInput {
  networkId: string;
  /** Omitted: the server keeps the router's address on NET, or takes NET's conventional gateway. */
  ip?: string;
  /**
   * The IPv6 address; false: none (no IPv6 routing on NET). Omitted: the server keeps the router's
   * IPv6 address on NET, or takes the first host of NET's first IPv6 subnet when it has one.
   */
  ipv6?: string | false;
}

/** The syntax of an interface argument, as usage errors and help texts name it. */
const INTERFACE_SYNTAX = 'NET[=IP[,IPV6]]';

/**
 * `web=10.0.0.1` -> {networkId: 'web', ip: '10.0.0.1'}; `web` -> {networkId: 'web'}, no ip sent
 * (the server checks the address itself, and picks it when there is none). After a comma the
 * IPv6 address: `web=10.0.0.1,fd00:1::1`, or `-` for none (`ipv6: false`); the IPv4 address may
 * then be left empty for the server's choice: `web=,fd00:1::1`, `web=,-`.
 */
export const parseInterface = (text: string, flag = '--interface'): InterfaceInput => {
  const eq = text.indexOf('=');
  // A comma in NET (no ID has one) is an address list without its `=`: `web,fd00:1::1`.
  if (eq < 0 && text !== '' && !text.includes(',')) return { networkId: text };
  const networkId = text.slice(0, eq);
  const [ip = '', ipv6, ...more] = text.slice(eq + 1).split(',');
  // `web=` is refused rather than read as `web`: an address was meant and is missing.
  const bad =
    eq < 1 ||
    networkId.includes(',') ||
    text.slice(eq + 1).includes('=') ||
    more.length > 0 ||
    ipv6 === '' ||
    (ip === '' && ipv6 === undefined);
  if (bad) {
    throw new UsageError(
      `${flag} '${text}': expected ${INTERFACE_SYNTAX}, e.g. web, web=10.0.0.1 or web=10.0.0.1,fd00:1::1 (IPV6 - for none)`,
    );
  }
  const out: InterfaceInput = { networkId };
  if (ip !== '') out.ip = ip;
  if (ipv6 !== undefined) out.ipv6 = ipv6 === '-' ? false : ipv6;
  return out;
};

interface RouteInput {
  destination: string;
  nexthop: string;
  networkId?: string;
}

/**
 * `0.0.0.0/0=10.3.0.9` -> {destination: '0.0.0.0/0', nexthop: '10.3.0.9'} (the server checks both);
 * IPv6 the same, split at the first `=` (no address has one): `::/0=fd00:3::9`. A next hop's
 * network after `%`, as an IPv6 zone (RFC 4007): `::/0=fe80::1%lan` -> networkId 'lan' (a
 * link-local next hop needs it).
 */
export const parseRoute = (text: string, flag = '--route'): RouteInput => {
  const eq = text.indexOf('=');
  const destination = text.slice(0, eq);
  const [nexthop = '', networkId, ...more] = text.slice(eq + 1).split('%');
  if (
    eq < 1 ||
    nexthop === '' ||
    nexthop.includes('=') ||
    !destination.includes('/') ||
    networkId === '' ||
    more.length > 0
  ) {
    throw new UsageError(
      `${flag} '${text}': expected DEST=NEXTHOP[%NET], e.g. 0.0.0.0/0=10.3.0.9 or ::/0=fe80::1%lan`,
    );
  }
  return networkId === undefined ? { destination, nexthop } : { destination, nexthop, networkId };
};

/** Every --route given: the whole new list; `--route none` alone empties it. */
export const parseRoutes = (values: string[]): RouteInput[] => {
  if (values.includes('none')) {
    if (values.length > 1) throw new UsageError('--route none means no routes; give it alone');
    return [];
  }
  return values.map((text) => parseRoute(text));
};

/** `0.0.0.0/0>10.3.0.9 ::/0>fe80::1%lan`, or '-' for a router with connected routes only. */
export const staticRoutesCell = (o: Record<string, unknown>): string => {
  const list = (o.routes as RouteInput[] | undefined) ?? [];
  if (list.length === 0) return '-';
  return list.map((r) => `${r.destination}>${r.nexthop}${r.networkId ? `%${r.networkId}` : ''}`).join(' ');
};

interface FloatingIpInput {
  ip: string;
  fixedIp: string;
}

/** The syntax of a floating IP argument, as usage errors and help texts name it. */
const FLOATING_SYNTAX = 'FLOATING=FIXED';

/**
 * `192.0.2.10=10.0.0.5` -> {ip: '192.0.2.10', fixedIp: '10.0.0.5'}: one address to one address
 * (1:1 NAT), split at the first `=`; the server checks both. A `/` on either side is a CIDR, a
 * mistake here (a floating IP maps one address), and the error says so.
 */
export const parseFloatingIp = (text: string, flag = '--floating-ip'): FloatingIpInput => {
  const expected = `${flag} '${text}': expected ${FLOATING_SYNTAX}, e.g. 192.0.2.10=10.0.0.5`;
  const eq = text.indexOf('=');
  const ip = eq < 0 ? text : text.slice(0, eq);
  const fixedIp = eq < 0 ? '' : text.slice(eq + 1);
  const cidr = [ip, fixedIp].find((part) => part.includes('/'));
  if (cidr !== undefined) {
    throw new UsageError(
      `${expected}; '${cidr}' is a CIDR: a floating IP maps one address to one address (no /)`,
    );
  }
  if (eq < 1 || fixedIp === '' || fixedIp.includes('=')) throw new UsageError(expected);
  return { ip, fixedIp };
};

/** Every --floating-ip given: the whole new list; `--floating-ip none` alone empties it. */
export const parseFloatingIps = (values: string[]): FloatingIpInput[] => {
  if (values.includes('none')) {
    if (values.length > 1) throw new UsageError('--floating-ip none means no floating IPs; give it alone');
    return [];
  }
  return values.map((text) => parseFloatingIp(text));
};

/** `192.0.2.10>10.0.0.5 192.0.2.11>10.0.0.6` (FLOATING>FIXED), or '-' for a router without any (the field absent). */
export const floatingIpsCell = (o: Record<string, unknown>): string => {
  const list = (o.floatingIps as FloatingIpInput[] | undefined) ?? [];
  return list.length === 0 ? '-' : list.map((f) => `${f.ip}>${f.fixedIp}`).join(' ');
};

/**
 * `--snat 192.0.2.1` -> {ip: '192.0.2.1'}; `--snat none` -> false (the server removes it). Given
 * once. The server checks the address (IPv4, on one of the router's networks); a CIDR or what is
 * no address at all is a usage error here, as a slip of the keyboard rather than a choice.
 */
export const parseSnat = (values: string[]): { ip: string } | false => {
  if (values.length !== 1) throw new UsageError('--snat takes one address (or none); give it once');
  const text = values[0]!;
  if (text === 'none') return false;
  if (text.includes('/')) {
    throw new UsageError(
      `--snat '${text}' is a CIDR: SNAT translates to one address, e.g. --snat 192.0.2.1 (or none)`,
    );
  }
  if (isIP(text) === 0) {
    throw new UsageError(`--snat '${text}': expected an IPv4 address, e.g. 192.0.2.1 (or none)`);
  }
  return { ip: text };
};

/**
 * The SNAT address and the count of its port forwards when it has some (`192.0.2.1 +2 fwd`), or
 * '-' for a router without SNAT (the field absent), as FLOATING shows none.
 */
export const snatCell = (o: Record<string, unknown>): string => {
  const snat = o.snat as Partial<SnatOut> | undefined;
  if (snat?.ip === undefined) return '-';
  const n = snat.portForwards?.length ?? 0;
  return n === 0 ? snat.ip : `${snat.ip} +${n} fwd`;
};

/**
 * The interfaces as a client sends them back: the MAC is derived by the server, never given; the
 * address is always there (the server stores the one it picked) and is sent as it is. So is the
 * IPv6 address, and its absence as `false`: omitted, the server would give an interface without
 * one the network's default IPv6 address, changing what the edit did not name.
 */
export const inputsOf = (router: Record<string, unknown>): Array<Required<InterfaceInput>> =>
  ((router.interfaces as Array<InterfaceInput & { ip: string }> | undefined) ?? []).map(
    ({ networkId, ip, ipv6 }) => ({ networkId, ip, ipv6: ipv6 ?? false }),
  );

/** `web=10.0.0.1 db=10.0.1.1,fd00:1::1` (the IPv6 address after a comma), or '-' for a router on no network yet. */
export const interfacesCell = (o: Record<string, unknown>): string => {
  const list = inputsOf(o);
  if (list.length === 0) return '-';
  return list.map((i) => `${i.networkId}=${i.ip}${i.ipv6 === false ? '' : `,${i.ipv6}`}`).join(' ');
};

/** The hypervisors routing for it (its read-only status), or '-' where none is known. */
export const routesOnCell = (o: Record<string, unknown>): string =>
  ((o.status as { chassis?: string[] } | undefined)?.chassis ?? []).join(',') || '-';

/** `12s` from milliseconds (rounded down), or '-' when it never answered. */
const ageCell = (ms: number | undefined): string => (ms === undefined ? '-' : `${Math.floor(ms / 1000)}s`);

/**
 * `weft router neighbors ID`: one row per address resolved by ARP or neighbour discovery; BEHIND names its VLAN binding
 * (binding/VLAN) or the endpoint holding it (a VIP). INSTALLED ON lists the
 * hypervisors holding its flows (up to three, then a count).
 */
export const neighborsText = (body: Record<string, unknown>): string => {
  const n = body as unknown as RouterNeighbors;
  if (n.neighbors.length === 0) {
    const why =
      n.role === 'standby'
        ? ': this controller is a standby and only the leader resolves (ask the leader)'
        : n.role === 'unknown'
          ? ' (this controller does not know whether it leads; only the leader resolves)'
          : '';
    return `router ${n.routerId}: no neighbours learned${why}\n`;
  }
  const rows = n.neighbors.map((x) => ({ ...x }) as Record<string, unknown>);
  const text = (v: unknown) => (v === undefined ? '-' : String(v));
  return table(rows, [
    { header: 'NETWORK', value: (r) => text(r.networkId) },
    { header: 'IP', value: (r) => text(r.ip) },
    { header: 'STATE', value: (r) => text(r.state) },
    { header: 'MAC', value: (r) => text(r.mac) },
    {
      header: 'BEHIND',
      value: (r) =>
        r.endpointId !== undefined
          ? `endpoint ${text(r.endpointId)}`
          : r.bindingId === undefined
            ? '-'
            : `${r.bindingId}/${text(r.vlan)}`,
    },
    { header: 'CHASSIS', value: (r) => text(r.chassisId) },
    {
      header: 'INSTALLED ON',
      value: (r) => {
        const on = r.installedOn as string[];
        if (on.length === 0) return '-';
        return on.length <= 3 ? on.join(',') : `${on.length} hypervisors`;
      },
    },
    { header: 'AGE', value: (r) => ageCell(r.confirmedAgoMs as number | undefined) },
  ]);
};

/** `weft router flush-neighbors ID [IP]`: what was forgotten. */
export const flushedText = (body: Record<string, unknown>): string => {
  const b = body as { routerId: string; flushed: Array<{ networkId: string; ip: string }> };
  if (b.flushed.length === 0) return `router ${b.routerId}: no neighbour to flush\n`;
  const list = b.flushed.map((f) => `${f.ip} (${f.networkId})`).join(', ');
  return `router ${b.routerId}: flushed ${b.flushed.length} neighbour${b.flushed.length === 1 ? '' : 's'}: ${list}\n`;
};

const oneArg = (verb: string, what: string, args: string[]): string => {
  if (args.length !== 1) throw new UsageError(`${verb} needs the router ID and ${what}`);
  return args[0]!;
};

export const routerCli: ResourceCli = {
  word: 'router',
  path: 'routers',
  noun: 'router',
  fields: [
    {
      flag: 'tenant',
      field: 'tenantId',
      type: 'string',
      help: 'owning tenant (implied for tenant tokens)',
      createOnly: true,
    },
    { flag: 'name', field: 'name', type: 'string', help: 'display name' },
    { flag: 'description', field: 'description', type: 'string', help: 'free text' },
    {
      flag: 'interface',
      field: 'interfaces',
      type: 'custom',
      help: `${INTERFACE_SYNTAX}: the router on network NET with address IP (NET alone: its current address there, else NET's first host address, 10.0.0.0/24: 10.0.0.1) and IPv6 address IPV6 (- for none; omitted: its current one there, else the first host of NET's first IPv6 subnet if any, fd00:1::/64: fd00:1::1); IP may be empty before IPV6 (web=,-); repeatable, replaces all interfaces`,
      parse: (v) => v.map((text) => parseInterface(text)),
    },
    {
      flag: 'route',
      field: 'routes',
      type: 'custom',
      help: "DEST=NEXTHOP: send traffic for CIDR DEST to the next hop NEXTHOP: a VM or any address on the router's networks (e.g. a physical router behind a VLAN binding), e.g. 0.0.0.0/0=10.3.0.9; IPv6 the same, e.g. ::/0=fd00:3::9; %NET names the next hop's network, required for a link-local next hop, e.g. ::/0=fe80::1%lan; repeatable, replaces all routes (none: no routes)",
      parse: parseRoutes,
    },
    {
      flag: 'floating-ip',
      field: 'floatingIps',
      type: 'custom',
      help: `${FLOATING_SYNTAX}: 1:1 NAT on the router's external network: traffic to the address FLOATING goes to FIXED, and FIXED's traffic routed into that network leaves with source FLOATING, e.g. 192.0.2.10=10.0.0.5 (IPv4 addresses, no /); repeatable, replaces all floating IPs (none: no floating IPs)`,
      parse: parseFloatingIps,
    },
    {
      flag: 'snat',
      field: 'snat',
      type: 'custom',
      merge: true,
      help: "IP: many-to-one source NAT: IPv4 from the router's other networks leaving through a VLAN binding of the network holding IP (its external network) leaves from IP, e.g. 192.0.2.1 (the router's own address there, or a free one; one address, no /); update keeps its port forwards (--port-forward); none: no SNAT",
      parse: parseSnat,
    },
    {
      flag: 'port-forward',
      field: 'snat.portForwards',
      type: 'custom',
      help: `${PORT_FORWARD_SYNTAX}: forward TCP or UDP port PORT of the SNAT address to IP (a host on an internal network) at its port PORT (omitted: the same; a range PORT-END goes to the same ports), ${PORT_FORWARD_EXAMPLE}; needs SNAT (--snat IP, or on update the router's); repeatable, replaces all port forwards (none: no port forwards)`,
      parse: parsePortForwards,
    },
  ],
  check: checkRouter,
  mergeOnUpdate: mergeSnat,
  render: { snat: snatText },
  filters: ['tenant', 'network'],
  columns: [
    col('ID', 'id'),
    col('TENANT', 'tenantId'),
    { header: 'INTERFACES', value: interfacesCell },
    { header: 'ROUTES', value: staticRoutesCell },
    { header: 'FLOATING', value: floatingIpsCell },
    { header: 'SNAT', value: snatCell },
    { header: 'ROUTES ON', value: routesOnCell },
    col('REV', 'revision'),
  ],
  reads: [
    {
      verb: 'neighbors',
      sub: 'neighbors',
      help: 'its neighbour table: addresses behind VLAN bindings and VIPs, resolved by ARP or neighbour discovery (MAC, binding or endpoint, age)',
      print: neighborsText,
    },
    {
      verb: 'flush-neighbors',
      sub: 'neighbors',
      method: 'DELETE',
      optionalArg: { name: 'IP', query: 'ip' },
      help: 'forget its neighbours (only IP, when given): their flows leave the switches, the next packet resolves them again',
      print: flushedText,
    },
  ],
  edits: [
    {
      verb: 'attach',
      args: INTERFACE_SYNTAX,
      help: 'add an interface on network NET at IP, or at its first host address (IPV6 as for --interface)',
      edit: (args) => {
        const add = parseInterface(oneArg('attach', INTERFACE_SYNTAX, args), 'attach');
        return (router) => {
          const list = inputsOf(router);
          const there = list.find((i) => i.networkId === add.networkId);
          if (there) {
            throw new EditRefused(
              `router '${router.id}' is already on network '${add.networkId}' (${there.ip}); detach it first`,
            );
          }
          return { interfaces: [...list, add] };
        };
      },
    },
    {
      verb: 'detach',
      args: 'NET',
      help: 'remove the interface on network NET',
      edit: (args) => {
        const net = oneArg('detach', 'NET', args);
        return (router) => {
          const list = inputsOf(router);
          if (!list.some((i) => i.networkId === net)) {
            throw new EditRefused(`router '${router.id}' has no interface on network '${net}'`);
          }
          return { interfaces: list.filter((i) => i.networkId !== net) };
        };
      },
    },
  ],
};
