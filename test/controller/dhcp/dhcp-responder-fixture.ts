import type { ChassisFacts } from '../../../apps/build-view.js';
import { type DhcpContext, DhcpResponder } from '../../../controller/dhcp/dhcp-responder.js';
import type { Dhcp, Endpoint, Network } from '../../../controller/intent/model.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { PacketIn } from '../../../southbound/openflow/codec/messages.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { packetInMessage } from '../packet-in-message.js';

/** A DHCP responder over one network n1 (VNI 100) and its endpoint e1, bound to port 7 of hv1. */
export const DPID = '00:00:00:00:00:00:00:01';
export const MAC = '02:00:00:00:00:0a';
export const dhcpOn: Dhcp = {
  enabled: true,
  router: '10.1.0.1',
  dnsServers: ['10.1.0.53'],
  domainName: 'corp.example',
  leaseSeconds: 3600,
};

export function world(
  over: {
    net?: Partial<Network>;
    ep?: Partial<Endpoint>;
    leader?: boolean;
    port?: number;
    gateway?: string;
  } = {},
) {
  const net: Network = { ...network('n1', 't1', 100), subnets: ['10.1.0.0/24'], dhcp: dhcpOn, ...over.net };
  const ep: Endpoint = { ...endpoint('e1', 'n1', 't1', MAC, '10.1.0.5'), ...over.ep };
  const facts: ChassisFacts = {
    bindings: new Map([[ep.ifaceId, { chassisId: 'hv1', ofport: over.port ?? 7 }]]),
    ports: new Map(),
  };
  let now = 0;
  const ctx: DhcpContext = {
    chassisOfDatapath: (dpid) => (dpid === DPID ? 'hv1' : undefined),
    facts: () => facts,
    networkByVni: (vni) => (vni === net.vni ? net : undefined),
    endpointByMac: (networkId, mac) => (networkId === net.id && mac === ep.mac ? ep : undefined),
    isLeader: () => over.leader ?? true,
    gatewayOf: (networkId) => (networkId === net.id ? over.gateway : undefined),
  };
  return {
    responder: new DhcpResponder(
      ctx,
      () => now,
      () => Date.UTC(2026, 11, 1) + now,
    ),
    tick: (ms: number) => (now += ms),
  };
}

/** The PACKET_IN the dhcp app's flow sends up from `port` (7 unless told) of network n1. */
export const packetIn = (
  data: Buffer,
  opts: { port?: number; vni?: number; cookie?: bigint } = {},
): PacketIn =>
  packetInMessage(data, {
    tableId: 10,
    cookie: opts.cookie ?? cookieFor('dhcp', 'network/n1'),
    port: opts.port ?? 7,
    ...(opts.vni === undefined ? {} : { vni: opts.vni }),
  });
