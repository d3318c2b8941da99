import { EventEmitter } from 'node:events';
import type { Network, Router } from '../../../controller/intent/model.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import type { RaContext } from '../../../controller/router/ra-responder.js';
import type { OfpMessage } from '../../../southbound/openflow/codec/messages.js';
import { network } from '../../apps/fixtures.js';

/**
 * The router advertisement tests' world: router r1 on web (VNI 100, 10.1.0.0/24 + fd00:1::/64,
 * r1 at fd00:1::1, MTU 1450), db (VNI 101, IPv4 only) and six (VNI 102, fd00:6::/64 + 2001:db8:6::/48,
 * r1 at fd00:6::1, MTU 9000); r2 on solo (VNI 103, fd00:3::/64, r2 at fd00:3::1, hosted nowhere);
 * lone (VNI 300) is on no router. Switches dp1 (hv1: VMs on ports 1, 2; web's VLAN 30 binding on
 * port 7; tunnel on port 100) and dp2 (hv2).
 */
export const DPID = '00:00:00:00:00:00:00:01';
export const DPID2 = '00:00:00:00:00:00:00:02';
export const WEB_GW = routerMac(100);
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };

export const networks: Network[] = [
  { ...network('web', 't1', 100), subnets: ['10.1.0.0/24', 'fd00:1::/64'] },
  { ...network('db', 't1', 101), subnets: ['10.2.0.0/24'] },
  { ...network('six', 't1', 102), mtu: 9000, subnets: ['fd00:6::/64', '2001:db8:6::/48'] },
  { ...network('solo', 't1', 103), subnets: ['fd00:3::/64'] },
  { ...network('lone', 't1', 300), subnets: ['fd00:9::/64'] },
];

export const r1: Router = {
  ...meta,
  id: 'r1',
  tenantId: 't1',
  routes: [],
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1', ipv6: 'fd00:1::1', mac: WEB_GW },
    { networkId: 'db', ip: '10.2.0.1', mac: routerMac(101) },
    { networkId: 'six', ip: '10.6.0.1', ipv6: 'fd00:6::1', mac: routerMac(102) },
  ],
};
export const r2: Router = {
  ...meta,
  id: 'r2',
  tenantId: 't1',
  routes: [],
  interfaces: [{ networkId: 'solo', ip: '10.3.0.1', ipv6: 'fd00:3::1', mac: routerMac(103) }],
};

export interface FakeSwitch {
  dpid: string;
  sent: OfpMessage[];
  fail?: 'reject' | 'throw';
  send(m: OfpMessage): Promise<void>;
}

/** Just what the advertisements use of a SwitchRegistry: events, get and list. */
export class FakeRegistry extends EventEmitter {
  readonly byDpid = new Map<string, FakeSwitch>();
  add(dpid: string): FakeSwitch {
    const sw: FakeSwitch = {
      dpid,
      sent: [],
      send(m) {
        if (sw.fail === 'throw') throw new Error('session closed');
        if (sw.fail === 'reject') return Promise.reject(new Error('connection reset'));
        sw.sent.push(m);
        return Promise.resolve();
      },
    };
    this.byDpid.set(dpid, sw);
    return sw;
  }
  get(dpid: string): FakeSwitch | undefined {
    return this.byDpid.get(dpid);
  }
  list(): FakeSwitch[] {
    return [...this.byDpid.values()];
  }
}

/** A context over these networks and routers; `state` changes what it answers. */
export function raWorld() {
  const state = {
    leader: true,
    routers: [r1, r2],
    /** networkId -> the dpid floodDatapath names. */
    hosts: new Map<string, string>([
      ['web', DPID],
      ['db', DPID],
      ['six', DPID2],
    ]),
  };
  const registry = new FakeRegistry();
  registry.add(DPID);
  registry.add(DPID2);
  const routerOn = (id: string) => {
    const router = state.routers.find((r) => r.interfaces.some((i) => i.networkId === id));
    const iface = router?.interfaces.find((i) => i.networkId === id);
    return router && iface ? { router, iface } : undefined;
  };
  const ctx: RaContext = {
    chassisOfDatapath: (dpid) => ({ [DPID]: 'hv1', [DPID2]: 'hv2' })[dpid],
    networkByVni: (vni) => networks.find((n) => n.vni === vni),
    network: (id) => networks.find((n) => n.id === id),
    routerOnNetwork: routerOn,
    routers: () => state.routers,
    isTunnelPort: (chassisId, ofport) => chassisId === 'hv1' && ofport === 100,
    vlanOf: (chassisId, networkId, ofport) =>
      chassisId === 'hv1' && networkId === 'web' && ofport === 7 ? 30 : undefined,
    floodDatapath: (id) => state.hosts.get(id),
    isLeader: () => state.leader,
  };
  return { ctx, state, registry, sw: (dpid: string) => registry.byDpid.get(dpid)! };
}

/** Log lines a pino logger wrote (parsed). */
export function logLines() {
  const lines: Array<{ level: number; msg: string; [k: string]: unknown }> = [];
  return { lines, stream: { write: (line: string) => lines.push(JSON.parse(line)) } };
}
