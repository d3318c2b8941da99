import { describe, expect, it } from 'vitest';
import { routerNetworkFlows } from '../../../apps/router/compute.js';
import { routerPorts, routerSnat } from '../../../apps/router/ports.js';
import type { NetworkRouter, PortForward, Snat, VlanPort } from '../../../apps/view.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { snatZone } from '../../../controller/pipeline/registers.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { network } from '../fixtures.js';
import { DB_PORT, router, WEB_PORT } from './fixtures.js';

/**
 * Port forwards of a router's SNAT address (apps/router/snat.ts): web (VNI 100, 10.0.0.0/24) is
 * internal, db (VNI 200, 10.0.1.0/24) the external network, bound to VLAN 42 on port 7 here.
 */
const web = WEB_PORT;
const ext = DB_PORT;
const uplink: VlanPort = { bindingId: 'up', ofport: 7, vlan: 42 };
const snatWith = (...portForwards: PortForward[]): Snat => ({
  ip: ext.ip,
  external: ext,
  sources: web.cidrs,
  zone: snatZone(ext.vni),
  portForwards,
});
const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));
const flowsOn = (snat: Snat, vlanPorts: VlanPort[], self = ext): string[] => {
  const flows: DesiredFlow[] = [];
  const r: NetworkRouter = { routerId: 'r1', self, ports: [ext, web], routes: [], floatingIps: [], snat };
  routerNetworkFlows({ vni: self.vni, router: r, vlanPorts }, flows);
  for (const f of flows) checkFlow(f);
  return text(flows);
};
/** What port forwards add to the SNAT's flows. */
const added = (vlanPorts: VlanPort[], ...forwards: PortForward[]) => {
  const without = new Set(flowsOn(snatWith(), vlanPorts));
  return flowsOn(snatWith(...forwards), vlanPorts).filter((f) => !without.has(f));
};

describe('port forwards in the router app', () => {
  it('a new connection from the binding to the SNAT address and port is committed with its internal destination, then routed', () => {
    expect(
      added(
        [uplink],
        { protocol: 'tcp', port: 8080, internalIp: '10.0.0.5', internalPort: 80 },
        { protocol: 'udp', port: 53, internalIp: '10.0.0.9', internalPort: 5353 },
      ),
    ).toEqual([
      'table=35, priority=310,ct_state=+new+trk,tcp,reg2=0x1,metadata=0xc8,in_port=7,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.1,tp_dst=8080 actions=set_field:0x2->reg2,ct(commit,table=35,zone=32968,nat(dst=10.0.0.5:80))',
      'table=35, priority=310,ct_state=+new+trk,udp,reg2=0x1,metadata=0xc8,in_port=7,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.1,tp_dst=53 actions=set_field:0x2->reg2,ct(commit,table=35,zone=32968,nat(dst=10.0.0.9:5353))',
    ]);
  });

  it('one per protocol, port and VLAN binding port; none where no binding of the external network is local, nor on the internal network', () => {
    const fwd: PortForward = { protocol: 'tcp', port: 22, internalIp: '10.0.0.5', internalPort: 22 };
    const two = added([uplink, { bindingId: 'up2', ofport: 9, vlan: 43 }], fwd);
    expect(two.map((f) => /in_port=(\d+)/.exec(f)?.[1])).toEqual(['7', '9']);
    expect(added([], fwd)).toEqual([]);
    expect(flowsOn(snatWith(fwd), [uplink], web).filter((f) => f.includes('nat(dst'))).toEqual([]);
  });

  it('a range: its aligned blocks as masked port matches, each translated to the internal host keeping its port', () => {
    const range: PortForward = {
      protocol: 'udp',
      port: 10000,
      portEnd: 10020,
      internalIp: '10.0.0.7',
      internalPort: 10000,
    };
    const flows = added([uplink], range);
    expect(flows.map((f) => /tp_dst=(\S+) /.exec(f)?.[1])).toEqual([
      '0x2710/0xfff0',
      '0x2720/0xfffc',
      '10020',
    ]);
    for (const f of flows) expect(f).toContain('ct(commit,table=35,zone=32968,nat(dst=10.0.0.7))');
  });

  it('routerSnat carries the stored port forwards', () => {
    const forwards = [
      { protocol: 'tcp' as const, port: 443, internalIp: '10.1.0.5', internalPort: 8443 },
      { protocol: 'udp' as const, port: 500, internalIp: '10.1.0.6', internalPort: 500 },
      { protocol: 'tcp' as const, port: 6000, portEnd: 6063, internalIp: '10.1.0.6', internalPort: 6000 },
    ];
    const r = { ...router(), snat: { ip: '10.2.0.1', portForwards: forwards } };
    const nets = new Map([
      ['web', network('web', 't-red', 100)],
      ['db', { ...network('db', 't-red', 101), subnets: ['10.2.0.0/24'] }],
    ]);
    expect(
      routerSnat(
        r,
        routerPorts(r, (id) => nets.get(id)),
      )?.portForwards,
    ).toEqual([
      { protocol: 'tcp', port: 443, internalIp: '10.1.0.5', internalPort: 8443 },
      { protocol: 'udp', port: 500, internalIp: '10.1.0.6', internalPort: 500 },
      { protocol: 'tcp', port: 6000, portEnd: 6063, internalIp: '10.1.0.6', internalPort: 6000 },
    ]);
  });
});
