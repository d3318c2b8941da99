import { routerNetworkFlows } from '../../../apps/router/compute.js';
import type { NetworkRouter } from '../../../apps/view.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { metadataForVni } from '../../../controller/pipeline/registers.js';
import type { FlowStats } from '../../../southbound/openflow/codec/index.js';
import { DB_PORT, WEB_PORT } from '../../apps/router/fixtures.js';

/** The router r1 of web (VNI 100) and db (VNI 200), as apps/router computes its flows. */
export const web = WEB_PORT;
export const db = DB_PORT;
/** r1's flows on web and db; `staticRoutes` (of web's side) as apps/router computes them too. */
export const routerFlows = (staticRoutes: NetworkRouter['routes'] = []): DesiredFlow[] => {
  const flows: DesiredFlow[] = [];
  const ports = [db, web];
  routerNetworkFlows(
    {
      vni: 100,
      router: {
        routerId: 'r1',
        self: web,
        ports,
        routes: staticRoutes,
        floatingIps: [],
      } satisfies NetworkRouter,
    },
    flows,
  );
  routerNetworkFlows(
    { vni: 200, router: { routerId: 'r1', self: db, ports, routes: [], floatingIps: [] } },
    flows,
  );
  return flows;
};

/** A flow as a FLOW stats reply reports it, with its counts (100 bytes a packet). */
export const stats = (f: DesiredFlow, packets: number): FlowStats => ({
  tableId: f.tableId,
  durationSec: 1,
  durationNsec: 0,
  priority: f.priority,
  idleTimeout: 0,
  hardTimeout: 0,
  flags: 0,
  cookie: f.cookie,
  packetCount: BigInt(packets),
  byteCount: BigInt(packets * 100),
  match: [...f.match],
  instructions: [...f.instructions],
});

/** r1's flows on one switch, counted: `count(flow)` says how many packets each one saw. */
export const counted = (count: (f: DesiredFlow) => number) => routerFlows().map((f) => stats(f, count(f)));

/** Which flow is which, by what it matches. */
export const dst = (f: DesiredFlow) => f.match.find((t) => t.field === 'ipv4_dst')?.value;
export const on = (f: DesiredFlow, vni: number) =>
  f.match.some((t) => t.field === 'metadata' && String(t.value) === String(metadataForVni(vni)));
