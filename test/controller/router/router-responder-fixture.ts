import type { Endpoint, Network, Router } from '../../../controller/intent/model.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import { cookieFor, objectCookie } from '../../../controller/pipeline/cookies.js';
import { parseIpv4Frame } from '../../../controller/router/icmp-error.js';
import { type RouterIcmpContext, RouterIcmpResponder } from '../../../controller/router/router-responder.js';
import type { PacketIn } from '../../../southbound/openflow/codec/messages.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { packetInMessage } from '../packet-in-message.js';
import { checksumHolds, type FrameSpec, ipv4Frame } from './frames.js';

/**
 * Router r1 joins web (VNI 100, 10.1.0.0/24, r1 at 10.1.0.1) and db (VNI 101, 10.2.0.0/24, r1 at
 * 10.2.0.1); lone (VNI 300) is on no router. On hv1 (switch DPID): w1 (web, 10.1.0.5) on port 1,
 * d1 (db, 10.2.0.5) on port 2, web's VLAN 30 binding on port 7 (where wv, 10.1.0.9, sits), the
 * tunnel on port 100.
 */
export const DPID = '00:00:00:00:00:00:00:01';
export const WEB_GW = routerMac(100);
export const DB_GW = routerMac(101);
export const W1_MAC = '02:00:00:00:01:05';
export const WV_MAC = '02:00:00:00:01:09';
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
export const r1: Router = {
  ...meta,
  id: 'r1',
  tenantId: 't1',
  routes: [],
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1', mac: WEB_GW },
    { networkId: 'db', ip: '10.2.0.1', mac: DB_GW },
  ],
};
const networks: Network[] = [
  { ...network('web', 't1', 100), subnets: ['10.1.0.0/24'] },
  { ...network('db', 't1', 101), subnets: ['10.2.0.0/24'] },
  { ...network('lone', 't1', 300), subnets: ['10.3.0.0/24'] },
];
const endpoints: Endpoint[] = [
  endpoint('w1', 'web', 't1', W1_MAC, '10.1.0.5'),
  endpoint('wv', 'web', 't1', WV_MAC, '10.1.0.9'),
  endpoint('d1', 'db', 't1', '02:00:00:00:02:05', '10.2.0.5'),
];

export function world(
  over: { leader?: boolean; router?: Router; resolveNeighbor?: RouterIcmpContext['resolveNeighbor'] } = {},
) {
  let now = 0;
  const router = over.router ?? r1;
  const ctx: RouterIcmpContext = {
    chassisOfDatapath: (dpid) => (dpid === DPID ? 'hv1' : undefined),
    networkByVni: (vni) => networks.find((n) => n.vni === vni),
    network: (id) => networks.find((n) => n.id === id),
    routerOnNetwork: (id) => (router.interfaces.some((i) => i.networkId === id) ? { router } : undefined),
    endpointByIp: (networkId, ip) => endpoints.find((e) => e.networkId === networkId && e.ips.includes(ip)),
    isTunnelPort: (chassisId, ofport) => chassisId === 'hv1' && ofport === 100,
    vlanOf: (chassisId, networkId, ofport) =>
      chassisId === 'hv1' && networkId === 'web' && ofport === 7 ? 30 : undefined,
    isLeader: () => over.leader ?? true,
    ...(over.resolveNeighbor ? { resolveNeighbor: over.resolveNeighbor } : {}),
  };
  return { responder: new RouterIcmpResponder(ctx, () => now), tick: (ms: number) => (now += ms) };
}

export const ROUTE = { tableId: 35, cookie: objectCookie('router', 'router', 'r1') };
export const NEIGHBOR = { tableId: 36, cookie: cookieFor('pipeline', 'table-miss/36') };

export interface Sent {
  from?: { tableId: number; cookie: bigint };
  port?: number;
  vni?: number;
  match?: PacketIn['match'];
}
export const packetIn = (data: Buffer, s: Sent = {}): PacketIn =>
  packetInMessage(data, { ...(s.from ?? ROUTE), port: s.port ?? 1, vni: s.vni, match: s.match });

/** w1 (web) sends this to its gateway, which sends it up from l3-route unless `s` says otherwise. */
export const fromW1 = (f: FrameSpec, s: Sent = {}) =>
  packetIn(ipv4Frame({ ethSrc: W1_MAC, ethDst: WEB_GW, ipSrc: '10.1.0.5', ...f }), s);

export const send = (r: RouterIcmpResponder, f: FrameSpec, s: Sent = {}) => r.handle(DPID, fromW1(f, s));

export function answered(outcome: ReturnType<RouterIcmpResponder['handle']>, sent: PacketIn) {
  if (outcome.kind !== 'answered') throw new Error(`not answered: ${JSON.stringify(outcome)}`);
  const data = outcome.out.data;
  const p = parseIpv4Frame(data);
  const icmpAt = p.ipStart + p.headerLength;
  const sentIp = parseIpv4Frame(sent.data);
  return {
    ...outcome,
    p,
    type: data[icmpAt],
    code: data[icmpAt + 1],
    checksums: checksumHolds(data.subarray(p.ipStart, icmpAt)) && checksumHolds(data.subarray(icmpAt)),
    quotesSent: data.subarray(icmpAt + 8).equals(sent.data.subarray(sentIp.ipStart, sentIp.ipEnd)),
  };
}

/** Sends `f` from w1 and returns the answer, decoded. */
export const answer = (r: RouterIcmpResponder, f: FrameSpec, s: Sent = {}) => {
  const sent = fromW1(f, s);
  return answered(r.handle(DPID, sent), sent);
};
