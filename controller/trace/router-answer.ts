import { isIpv6 } from '../../southbound/openflow/codec/values.js';
import { parseIp } from '../intent/net.js';
import { TABLE } from '../pipeline/tables.js';
import { IP_PROTOCOL, icmpErrorFor } from '../router/icmp-decision.js';
import { ERROR_TTL, ICMP_ERROR_CODES, type IcmpError, whyNoError } from '../router/icmp-error.js';
import { ICMPV6_ERROR_CODES, whyNoError6 } from '../router/icmp6-error.js';
import { canonical, fieldText, type Packet, packetOf } from './packet.js';
import type { TraceHop, TraceRun, TraceStepView } from './trace-across.js';
import type { TraceTarget } from './verdict.js';

/**
 * A probe a router's flows sent up to the controller (l3-route's flows to the controller, or
 * l3-neighbor's miss), and what the controller answers for the router: the ICMP error the
 * responder would send (controller/router, by the same rule), or why it sends none; ICMPv6 for an
 * IPv6 probe. Pure.
 */
export interface RouterPunt {
  chassis: string;
  router: string;
  /** The table whose flow sent it up. */
  table: typeof TABLE.L3_ROUTE | typeof TABLE.L3_NEIGHBOR;
  step: TraceStepView;
  /** The destination as it was sent up. */
  ipDst: string;
  /** The error the sender gets back. */
  error?: IcmpError['kind'];
  /** Why the router answers nothing (no error may be sent about such a packet). */
  silent?: string;
  /**
   * The address the router resolves for it, by ARP or neighbour solicitation (the packet is dropped meanwhile); `holders`:
   * the endpoints allowed it exactly (a VIP), whom alone the router asks.
   */
  resolving?: { ip: string; networkId: string; holders?: string[] };
}

const ROUTER = 'router/';
const ETHERTYPE_IPV6 = 0x86ddn;

/** The router whose l3-route flow the hop met (on l3-neighbor's miss: the one that routed it). */
function routerOf(hop: TraceHop, step: TraceStepView): string | undefined {
  const upTo = hop.steps.indexOf(step);
  for (let i = upTo; i >= 0; i--) {
    const s = hop.steps[i]!;
    if (s.table === TABLE.L3_ROUTE && s.flow?.owner?.startsWith(ROUTER))
      return s.flow.owner.slice(ROUTER.length);
  }
  return undefined;
}

/** Which table sent it up for the router, as the responder tells its own packet-ins from others'. */
function tableOf(step: TraceStepView): RouterPunt['table'] | undefined {
  if (step.table === TABLE.L3_ROUTE && step.flow?.app === 'router') return TABLE.L3_ROUTE;
  if (step.table === TABLE.L3_NEIGHBOR && step.flow?.app === 'pipeline') return TABLE.L3_NEIGHBOR;
  return undefined;
}

const text = (p: Packet, field: string): string | undefined => {
  const v = p.get(canonical(field));
  if (v === undefined) return undefined;
  const t = String(fieldText(field, v));
  // Addresses in the intent's canonical text, as the router's services key them.
  return field.startsWith('ip') ? (parseIp(t)?.text ?? t) : t;
};

/** The first copy a router's flows sent up, with the router's answer; undefined when none did. */
export function routerPuntOf(
  run: TraceRun,
  target: TraceTarget,
  arpState?: (networkId: string, ip: string) => 'resolves' | 'failed' | undefined,
): RouterPunt | undefined {
  for (const hop of run.hops) {
    for (const o of hop.outputs) {
      if (o.to !== 'controller') continue;
      const step = run.sentBy.get(o);
      const p = run.packets.get(o);
      const table = step && tableOf(step);
      if (!step || !p || table === undefined) continue;
      const router = routerOf(hop, step) ?? target.gateway?.router;
      const v6 = p.get(canonical('eth_type')) === ETHERTYPE_IPV6;
      const ipDst = text(p, v6 ? 'ipv6_dst' : 'ip_dst');
      const ipSrc = text(p, v6 ? 'ipv6_src' : 'ip_src');
      if (!router || ipDst === undefined || ipSrc === undefined) continue;
      const protocol = Number(p.get(canonical('ip_proto')) ?? 0n);
      // l3-route sends it up before routing: its destination is still the probe's own.
      const toRouter = target.gateway?.router === router && target.gateway.routerAddress === true;
      const error = icmpErrorFor({
        table,
        toRouter,
        protocol,
        ttl: Number(p.get(canonical('nw_ttl')) ?? 0n),
        family: v6 ? 6 : 4,
      });
      const ping = v6 ? IP_PROTOCOL.ICMPV6 : IP_PROTOCOL.ICMP;
      const icmpType = protocol === ping ? p.get(canonical(v6 ? 'icmpv6_type' : 'icmp_type')) : undefined;
      const headers = {
        ipSrc,
        ipDst,
        ethDst: text(p, 'eth_dst') ?? '',
        ...(icmpType === undefined ? {} : { icmpType: Number(icmpType) }),
      };
      // As the responder: nothing about a directed broadcast of one of the router's subnets (IPv4),
      // nor from one's subnet-router anycast address (IPv6). A trace's probe is never a fragment, and
      // carries no IPv6 extension header: its next header is its protocol.
      const why = v6
        ? whyNoError6({ ...headers, nextHeader: protocol }, target.gateway?.subnets)
        : whyNoError({ ...headers, firstFragment: true }, target.gateway?.subnets);
      const base = { chassis: hop.chassis, router, table, step, ipDst };
      // l3-neighbor sent it up for want of a MAC: weft asks (ARP, neighbour solicitation) where a
      // VLAN binding or a VIP's endpoints may answer.
      const into = target.gateway?.into;
      const nextHop = target.gateway?.via ?? ipDst;
      if (table === TABLE.L3_NEIGHBOR && into && arpState?.(into, nextHop) === 'resolves')
        return { ...base, resolving: { ip: nextHop, networkId: into } };
      const icmp = v6 ? 'ICMPv6' : 'ICMP';
      if (!error) return { ...base, silent: `it answers no ${icmp} to its own addresses but pings` };
      if (why) return { ...base, silent: `no ${icmp} error is sent about a packet when ${why}` };
      return { ...base, error };
    }
  }
  return undefined;
}

/** Whom the router's error comes from (its address and gateway MAC on the sender's network) and goes to. */
export interface ErrorAddresses {
  routerIp: string;
  routerMac: string;
  senderIp: string;
  senderMac: string;
}

/**
 * The ICMP error as the sender receives it: from the router's address there, TTL 64; ICMPv6 (hop
 * limit 64) to an IPv6 sender. Undefined when the router's address is not of the sender's family.
 */
export function icmpErrorPacket(error: IcmpError['kind'], a: ErrorAddresses): Packet | undefined {
  const v6 = isIpv6(a.senderIp);
  if (v6 !== isIpv6(a.routerIp)) return undefined;
  if (v6) {
    const { type, code } = ICMPV6_ERROR_CODES[error];
    return packetOf({
      eth_src: a.routerMac,
      eth_dst: a.senderMac,
      eth_type: 0x86dd,
      ipv6_src: a.routerIp,
      ipv6_dst: a.senderIp,
      ip_proto: IP_PROTOCOL.ICMPV6,
      nw_ttl: ERROR_TTL,
      icmpv6_type: type,
      icmpv6_code: code,
    });
  }
  const { type, code } = ICMP_ERROR_CODES[error];
  return packetOf({
    eth_src: a.routerMac,
    eth_dst: a.senderMac,
    eth_type: 0x0800,
    ip_src: a.routerIp,
    ip_dst: a.senderIp,
    ip_proto: IP_PROTOCOL.ICMP,
    nw_ttl: ERROR_TTL,
    icmp_type: type,
    icmp_code: code,
  });
}
