import { cookieFor, objectCookie } from '../../controller/pipeline/cookies.js';
import {
  apply,
  type Desired,
  type DesiredFlow,
  type DesiredMeter,
  goto,
  output,
  setField,
  writeMetadata,
} from '../../controller/pipeline/flow.js';
import {
  METADATA_VNI_MASK,
  metadataForVni,
  PORT_CLASS,
  REG_OUTPORT,
  REG_PORT_CLASS,
} from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Match, OxmTlv } from '../../southbound/openflow/codec/match.js';
import {
  frozen,
  Interner,
  inPortTlv,
  internedInstructions,
  internedMatch,
  tunnelActions,
  tunnelKey,
  vniMetadataTlv,
} from '../interned.js';
import { copyActions, ingressCopyActions } from '../mirror/compute.js';
import { metered, portMeters } from '../qos/compute.js';
import {
  type DatapathCtx,
  type DatapathView,
  type LocalPort,
  type NetworkOnChassis,
  type RemoteEndpoint,
  tunnelPortFor,
} from '../view.js';

// Shared parts (apps/interned.ts): flows are never mutated once built, so one copy serves every flow.
const MARK_LOCAL_ACTIONS = [setField(REG_PORT_CLASS, PORT_CLASS.LOCAL)];
const MARK_LOCAL = apply(...MARK_LOCAL_ACTIONS);
const TO_PORT_SECURITY = goto(TABLE.PORT_SECURITY);
const TO_INGRESS_ACL = goto(TABLE.INGRESS_ACL);
const perVni = new Interner((vni: number) => {
  const meta = metadataForVni(vni);
  const write = writeMetadata(meta, METADATA_VNI_MASK);
  return frozen({
    metaMatch: vniMetadataTlv.get(vni),
    /** Joins the network (a local port's classify, after marking it local). */
    write,
    /** A local port's classify instructions: mark local, join the network, on to port security. */
    classify: [MARK_LOCAL, write, TO_PORT_SECURITY],
  });
}, 100_000);
const inPortMatch = internedMatch((ofport) => [inPortTlv.get(ofport)]);
const toPort = internedInstructions((ofport: number) => [
  apply(setField(REG_OUTPORT, ofport)),
  TO_INGRESS_ACL,
]);
const outPortMatch = internedMatch((ofport) => [{ field: REG_OUTPORT, value: ofport }]);
const outputTo = internedInstructions((ofport: number) => [apply(output(ofport))]);
/** Into the tunnel towards one chassis, by tunnelKey. */
const intoTunnel = internedInstructions((key: string) => [apply(...tunnelActions(key))]);

/**
 * The overlay: which network a packet belongs to, and where a known MAC lives.
 * - classify: a local port -> its network; the tunnel port + tun_id -> the network (asap2: the
 *   per-VNI fixed-key port alone says which network).
 * - l2-lookup: a local MAC -> reg7 and on to ingress policy; a remote MAC -> tun_dst + tun_id and
 *   out of the single `remote_ip=flow` VXLAN port (asap2: the network's fixed-key port).
 *   OVS never outputs a packet to its own in_port, so traffic from the tunnel cannot hairpin.
 * - output: reg7 -> the local port.
 * A mirrored port's classify and output flows also send the mirrors' copies (apps/mirror).
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  const meters: DesiredMeter[] = [];
  for (const net of view.networks) {
    networkFlows(view, net, flows);
    for (const port of net.local) {
      localPortFlows(net, port, flows);
      meters.push(...portMeters(port));
    }
    for (const ep of net.remote) remoteEndpointFlows(view, net, ep, flows);
  }
  return meters.length > 0 ? { flows, groups: [], meters } : { flows, groups: [] };
}

/** The network's own flow: traffic arriving from the tunnel with its VNI joins it. */
export function networkFlows(view: DatapathCtx, net: NetworkOnChassis, flows: DesiredFlow[]): void {
  const meta = metadataForVni(net.vni);
  const tunnelPort = tunnelPortFor(view, net.vni);
  const netCookie = cookieFor('overlay', `network/${net.networkId}`);

  if (tunnelPort !== undefined && net.fromTunnel) {
    flows.push({
      tableId: TABLE.CLASSIFY,
      priority: 100,
      cookie: netCookie,
      match:
        view.offload === 'asap2'
          ? [{ field: 'in_port', value: tunnelPort }]
          : [
              { field: 'in_port', value: tunnelPort },
              { field: 'tun_id', value: BigInt(net.vni) },
            ],
      instructions: [
        apply(setField(REG_PORT_CLASS, PORT_CLASS.TUNNEL)),
        writeMetadata(meta, METADATA_VNI_MASK),
        goto(TABLE.L2_LOOKUP),
      ],
    });
  }
}

/** A local endpoint: its port joins the network; its MAC leads to its port. */
export function localPortFlows(
  net: Pick<NetworkOnChassis, 'vni'>,
  port: LocalPort,
  flows: DesiredFlow[],
): void {
  const v = perVni.get(net.vni);
  const cookie = objectCookie('overlay', 'endpoint', port.endpointId);
  const egressCopies = port.mirrors?.egress;
  flows.push({
    tableId: TABLE.CLASSIFY,
    priority: 100,
    cookie,
    match: inPortMatch.get(port.ofport),
    instructions: metered(
      port,
      'egress',
      egressCopies?.length
        ? [apply(...copyActions(egressCopies), ...MARK_LOCAL_ACTIONS), v.write, TO_PORT_SECURITY]
        : v.classify,
    ),
  });
  flows.push({
    tableId: TABLE.L2_LOOKUP,
    priority: 100,
    cookie,
    match: isL2Match(port.l2Match, v.metaMatch, port.mac)
      ? port.l2Match
      : [v.metaMatch, { field: 'eth_dst', value: port.mac }],
    instructions: toPort.get(port.ofport),
  });
  const ingressCopies = port.mirrors?.ingress;
  flows.push({
    tableId: TABLE.OUTPUT,
    priority: 100,
    cookie,
    match: outPortMatch.get(port.ofport),
    instructions: metered(
      port,
      'ingress',
      ingressCopies?.length
        ? [apply(output(port.ofport), ...ingressCopyActions(ingressCopies))]
        : outputTo.get(port.ofport),
    ),
  });
  // Its own broadcasts come back here through its flood bucket: OVS skips the output to their
  // in_port, but the copies after it would still go out, as if the port had received them.
  if (ingressCopies?.length)
    flows.push({
      tableId: TABLE.OUTPUT,
      priority: 110,
      cookie,
      match: [outPortMatch.get(port.ofport)[0]!, inPortTlv.get(port.ofport)],
      instructions: [],
    });
}

/** Whether `m` is the l2-lookup match of `mac` in the network of `metaMatch` (and may be shared). */
function isL2Match(m: Match | undefined, metaMatch: OxmTlv, mac: string): m is Match {
  if (m?.length !== 2 || m[0] !== metaMatch) return false;
  const t = m[1]!;
  return t.field === 'eth_dst' && t.value === mac && t.mask === undefined;
}

/** A remote endpoint: its MAC leads into the tunnel towards its chassis. */
export function remoteEndpointFlows(
  view: DatapathCtx,
  net: Pick<NetworkOnChassis, 'vni'>,
  ep: RemoteEndpoint,
  flows: DesiredFlow[],
): void {
  const tunnelPort = tunnelPortFor(view, net.vni);
  if (tunnelPort === undefined) return;
  const v = perVni.get(net.vni);
  flows.push({
    tableId: TABLE.L2_LOOKUP,
    priority: 100,
    cookie: objectCookie('overlay', 'endpoint', ep.endpointId),
    match: [v.metaMatch, { field: 'eth_dst', value: ep.mac }],
    instructions: intoTunnel.get(tunnelKey(view.offload, net.vni, ep.tunnelIp, tunnelPort)),
  });
}
