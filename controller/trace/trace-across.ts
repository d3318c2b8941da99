import type { ChassisPorts } from '../../apps/build-view.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import { formatInstructions } from '../../southbound/openflow/text/format-actions.js';
import { formatMatch } from '../../southbound/openflow/text/format-match.js';
import { appOf } from '../pipeline/cookies.js';
import type { Desired, DesiredFlow } from '../pipeline/flow.js';
import { isLogCopy } from '../pipeline/meters.js';
import { TABLE, tableName } from '../pipeline/tables.js';
import { type SimOutput, type SimStep, simulateBridge } from './bridge-sim.js';
import { bitsOf, fieldText, onNextBridge, type Packet } from './packet.js';

/**
 * A packet followed across hypervisors: the pipeline of the chassis it starts on, then, for every
 * copy that enters the VXLAN tunnel, the pipeline of the chassis whose underlay address it was
 * sent to, and so on. Everything comes from the desired state (what weft puts on the switches)
 * and the chassis facts; nothing is sent anywhere. Pure.
 */
export interface TraceWorld {
  desired(chassisId: string): Desired | undefined;
  ports(chassisId: string): ChassisPorts | undefined;
  chassisOfTunnelIp(ip: string): string | undefined;
  tunnelIpOf(chassisId: string): string | undefined;
  /** The endpoint whose VM port is `ofport` on this chassis. */
  endpointAt(chassisId: string, ofport: number): string | undefined;
  /** The object a flow exists for ("endpoint/r2", "acl/a1", "table-miss/56"), from its cookie. */
  ownerOf(cookie: bigint): string | undefined;
}

export interface TraceStepView {
  pass: number;
  depth: number;
  table: number;
  tableName: string;
  /** The flow that matched, as `ovs-ofctl dump-flows` prints it; absent when none did. */
  flow?: { priority: number; cookie: string; app?: string; owner?: string; match: string; actions: string };
  group?: number;
  /** This step is where a copy of the packet ended without being sent anywhere. */
  drop: boolean;
  /** Why the flow's actions stopped short, ending the packet here (the TTL ran out). */
  stopped?: string;
}

export type TraceOutput =
  | { to: 'endpoint'; port: number; endpoint: string }
  | { to: 'tunnel'; port: number; chassis?: string; tunnelIp: string; vni: number }
  | { to: 'sender'; port: number }
  | { to: 'port'; port: number; name?: string; vlan?: number }
  | { to: 'controller'; port: number };

export interface TraceHop {
  chassis: string;
  inPort: number;
  /** The chassis the packet came from through the tunnel (absent on the first hop). */
  fromChassis?: string;
  steps: TraceStepView[];
  outputs: TraceOutput[];
  notes: string[];
}

/**
 * The hops, and for each output the packet it sent (as it left the bridge) and the step whose flow
 * sent it, for whoever reads them out.
 */
export interface TraceRun {
  hops: TraceHop[];
  packets: Map<TraceOutput, Packet>;
  sentBy: Map<TraceOutput, TraceStepView>;
}

/** Adds an output of a hop's simulation to the hop, remembering what sent it and the packet. */
type Report = (hop: TraceHop, output: TraceOutput, out: SimOutput) => void;

export interface TraceOptions {
  ctState: bigint;
  /** At most this many bridge visits (a guard; weft's flood groups never loop). */
  maxHops?: number;
}

/**
 * Whether a flow sends the packet on (a next table, an output, a group, a resubmit, conntrack); a
 * security-group log copy to the controller is not a way on (the packet itself is dropped).
 */
function forwards(flow: DesiredFlow): boolean {
  for (const i of flow.instructions) {
    if (i.type === 'goto_table') return true;
    if (i.type === 'apply_actions' || i.type === 'write_actions') {
      for (const a of i.actions)
        if (
          a.type === 'output' ||
          a.type === 'group' ||
          a.type === 'resubmit' ||
          a.type === 'ct' ||
          (a.type === 'controller' && !isLogCopy(a))
        )
          return true;
    }
  }
  return false;
}

function stepView(s: SimStep, world: TraceWorld): TraceStepView {
  const view: TraceStepView = {
    pass: s.pass,
    depth: s.depth,
    table: s.table,
    tableName: tableName(s.table),
    drop: !s.flow || !forwards(s.flow) || s.stopped !== undefined,
  };
  if (s.group !== undefined) view.group = s.group;
  if (s.stopped !== undefined) view.stopped = s.stopped;
  if (s.flow) {
    const app = appOf(s.flow.cookie);
    const owner = world.ownerOf(s.flow.cookie);
    view.flow = {
      priority: s.flow.priority,
      cookie: `0x${s.flow.cookie.toString(16)}`,
      ...(app ? { app } : {}),
      ...(owner ? { owner } : {}),
      match: formatMatch(s.flow.match, s.flow.priority),
      actions: formatInstructions(s.flow.instructions),
    };
  }
  return view;
}

function isTunnelPort(ports: ChassisPorts | undefined, port: number): boolean {
  if (!ports) return false;
  if (ports.tunnelPort === port) return true;
  for (const p of ports.vniTunnelPorts?.values() ?? []) if (p === port) return true;
  return false;
}

/** The port a VXLAN packet of `vni` arrives on at a chassis: its fixed-key port for that VNI, if any. */
function arrivalPort(ports: ChassisPorts | undefined, vni: number): number | undefined {
  return ports?.vniTunnelPorts?.get(vni) ?? ports?.tunnelPort;
}

export function traceAcross(
  world: TraceWorld,
  chassisId: string,
  packet: Packet,
  opts: TraceOptions,
): TraceRun {
  const hops: TraceHop[] = [];
  const packets = new Map<TraceOutput, Packet>();
  const sentBy = new Map<TraceOutput, TraceStepView>();
  const report: Report = (hop, o, out) => {
    hop.outputs.push(o);
    packets.set(o, out.packet);
    const step = hop.steps[out.step];
    if (step) sentBy.set(o, step);
  };
  const queue: Array<{ chassis: string; packet: Packet; from?: string }> = [{ chassis: chassisId, packet }];
  const maxHops = opts.maxHops ?? 64;
  while (queue.length > 0) {
    const { chassis, packet: p, from } = queue.shift()!;
    const hop: TraceHop = {
      chassis,
      inPort: Number(p.get('in_port')),
      ...(from ? { fromChassis: from } : {}),
      steps: [],
      outputs: [],
      notes: [],
    };
    hops.push(hop);
    const desired = world.desired(chassis);
    if (!desired) {
      hop.notes.push(`weft has no desired state for chassis ${chassis} (not connected or not known)`);
      continue;
    }
    const sim = simulateBridge(desired, p, { ctState: opts.ctState });
    hop.steps = sim.steps.map((s) => stepView(s, world));
    hop.notes.push(...sim.notes);
    const ports = world.ports(chassis);
    const copies = mirrorCopies(sim.steps, sim.outputs);
    for (const out of sim.outputs) {
      if (copies.has(out)) hop.notes.push(copyNote(world, chassis, out));
      else if (out.port === ofpp.CONTROLLER) report(hop, { to: 'controller', port: out.port }, out);
      else if (isTunnelPort(ports, out.port)) {
        const arrival = intoTunnel(world, hop, out, report);
        if (arrival && hops.length + queue.length >= maxHops)
          hop.notes.push(`stopped following after ${maxHops} bridges`);
        else if (arrival) queue.push(arrival);
      } else if (out.port === hop.inPort && !from) report(hop, { to: 'sender', port: out.port }, out);
      else {
        const endpoint = world.endpointAt(chassis, out.port);
        if (endpoint) report(hop, { to: 'endpoint', port: out.port, endpoint }, out);
        else report(hop, physicalOutput(ports, out.port, out.packet), out);
      }
    }
  }
  return { hops, packets, sentBy };
}

/**
 * The outputs that are port mirroring's copies (apps/mirror): every output of a classify flow
 * (weft's classify flows output nothing else), and every output of an output-table flow to
 * another port than the packet's reg7 (the port it is for). A trace follows the packet, not its
 * copies: they are noted, so a copy reaching a capture VM never reads as the packet delivered there.
 */
function mirrorCopies(steps: readonly SimStep[], outputs: readonly SimOutput[]): Set<SimOutput> {
  const out = new Set<SimOutput>();
  for (const o of outputs) {
    const table = steps[o.step]?.table;
    if (table === TABLE.CLASSIFY || (table === TABLE.OUTPUT && Number(o.packet.get('reg7')) !== o.port))
      out.add(o);
  }
  return out;
}

function copyNote(world: TraceWorld, chassis: string, out: SimOutput): string {
  const endpoint = world.endpointAt(chassis, out.port);
  if (endpoint) return `port mirroring: a copy goes to ${endpoint} (port ${out.port})`;
  const tunnelIp = String(fieldText('tun_dst', out.packet.get('tun_dst') ?? 0n));
  const next = world.chassisOfTunnelIp(tunnelIp);
  const vni = Number(out.packet.get('tun_id') ?? 0n);
  return `port mirroring: a copy goes into the tunnel to ${next ?? tunnelIp}${vni ? ` with VNI ${vni}` : ''}`;
}

/**
 * A copy sent into the tunnel: the output as the hop reports it, and the packet as it arrives at
 * the chassis whose underlay address it was sent to (undefined, with a note, when it arrives nowhere).
 */
function intoTunnel(
  world: TraceWorld,
  hop: TraceHop,
  out: SimOutput,
  report: Report,
): { chassis: string; packet: Packet; from: string } | undefined {
  const tunnelIp = String(fieldText('tun_dst', out.packet.get('tun_dst') ?? 0n));
  const vni = Number(out.packet.get('tun_id') ?? 0n);
  const next = world.chassisOfTunnelIp(tunnelIp);
  report(hop, { to: 'tunnel', port: out.port, ...(next ? { chassis: next } : {}), tunnelIp, vni }, out);
  if (!next) {
    hop.notes.push(`no chassis has tunnel address ${tunnelIp}: the copy sent there is lost`);
    return undefined;
  }
  const port = arrivalPort(world.ports(next), vni);
  if (port === undefined) {
    hop.notes.push(`chassis ${next} has no VXLAN port: the copy sent there is lost`);
    return undefined;
  }
  const arriving = onNextBridge(out.packet, port);
  const src = world.tunnelIpOf(hop.chassis);
  if (src) arriving.set('tun_src', bitsOf('tun_src', src));
  return { chassis: next, packet: arriving, from: hop.chassis };
}

function physicalOutput(ports: ChassisPorts | undefined, port: number, p: Packet): TraceOutput {
  const name = [...(ports?.byName ?? [])].find(([, n]) => n === port)?.[0];
  const vid = Number(p.get('vlan_vid') ?? 0n);
  return { to: 'port', port, ...(name ? { name } : {}), ...(vid & 0x1000 ? { vlan: vid & 0xfff } : {}) };
}
