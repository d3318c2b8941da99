import { describe, expect, it } from 'vitest';
import type { Endpoint, Network, Router } from '../controller/intent/model.js';
import { routerMac } from '../controller/intent/model-router.js';
import { cookieFor } from '../controller/pipeline/cookies.js';
import { parseIpv4Frame } from '../controller/router/icmp-error.js';
import { type RouterIcmpContext, RouterIcmpResponder } from '../controller/router/router-responder.js';
import type { PacketIn } from '../southbound/openflow/codec/messages.js';
import { endpoint, network } from './apps/fixtures.js';
import { ipv4Frame, udp } from './controller/router/frames.js';

const DPID = '00:00:00:00:00:00:00:01';
const WEB_GW = routerMac(100);
const DB_GW = routerMac(101);
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
const r1: Router = {
  ...meta, id: 'r1', tenantId: 't1', routes: [],
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1', mac: WEB_GW },
    { networkId: 'db', ip: '10.2.0.1', mac: DB_GW },
  ],
  floatingIps: [{ ip: '10.2.0.50', fixedIp: '10.1.0.5' }, { ip: '10.2.0.51', fixedIp: '10.1.0.77' }],
} as Router;
const networks: Network[] = [
  { ...network('web', 't1', 100), subnets: ['10.1.0.0/24'] },
  { ...network('db', 't1', 101), subnets: ['10.2.0.0/24'] },
];
const endpoints: Endpoint[] = [
  endpoint('w1', 'web', 't1', '02:00:00:00:01:05', '10.1.0.5'),
  endpoint('d1', 'db', 't1', '02:00:00:00:02:05', '10.2.0.5'),
];
const ctx: RouterIcmpContext = {
  chassisOfDatapath: () => 'hv1',
  networkByVni: (vni) => networks.find((n) => n.vni === vni),
  network: (id) => networks.find((n) => n.id === id),
  routerOnNetwork: () => ({ router: r1 }),
  endpointByIp: (n, ip) => endpoints.find((e) => e.networkId === n && e.ips.includes(ip)),
  isTunnelPort: () => false,
  vlanOf: () => undefined,
  isLeader: () => true,
  resolveNeighbor: () => 'unreachable',
};
const NEIGHBOR = { tableId: 36, cookie: cookieFor('pipeline', 'table-miss/36') };
const pin = (data: Buffer, port: number, vni: number): PacketIn => ({
  type: 'PACKET_IN', xid: 0, bufferId: 0xffffffff, totalLen: data.length, reason: 1, ...NEIGHBOR,
  match: [{ field: 'in_port', value: port }, { field: 'metadata', value: BigInt(vni) }], data,
});

describe('review: ICMP errors for NATed packets', () => {
  it('outbound: w1 (fixed) -> 10.2.0.77 on db, source already rewritten to 10.2.0.50', () => {
    const r = new RouterIcmpResponder(ctx, () => 0);
    const data = ipv4Frame({ ethSrc: DB_GW, ethDst: '00:00:00:00:00:00', ipSrc: '10.2.0.50', ipDst: '10.2.0.77', ttl: 63, payload: udp(1, 2) });
    const o = r.handle(DPID, pin(data, 1, 101));
    console.log('outbound:', JSON.stringify(o));
  });
  it('inbound: d1 -> floating 10.2.0.51 whose fixed 10.1.0.77 nobody holds', () => {
    const r = new RouterIcmpResponder(ctx, () => 0);
    const data = ipv4Frame({ ethSrc: WEB_GW, ethDst: '00:00:00:00:00:00', ipSrc: '10.2.0.5', ipDst: '10.1.0.77', ttl: 63, payload: udp(1, 2) });
    const o = r.handle(DPID, pin(data, 2, 100));
    if (o.kind === 'answered') {
      const p = parseIpv4Frame(o.out.data);
      const q = o.out.data.subarray(p.ipStart + p.headerLength + 8); const inner = { ipDst: [...q.subarray(16, 20)].join('.'), ipSrc: [...q.subarray(12,16)].join('.') };
      console.log('inbound answered:', o.error, 'from', p.ipSrc, 'to', p.ipDst, 'quoting dst', inner.ipDst, 'out', JSON.stringify(o.out.actions));
    } else console.log('inbound:', JSON.stringify(o));
  });
});
