import type { Action } from '../../southbound/openflow/codec/actions.js';
import { OFPP16_IN_PORT, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { Instruction } from '../../southbound/openflow/codec/instructions.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { CT_COMMIT, NAT_DST, NAT_SRC, type Subfield } from '../../southbound/openflow/codec/nx-actions.js';
import type { OxmValue } from '../../southbound/openflow/codec/oxm.js';
import { CS } from '../pipeline/conntrack.js';
import type { Desired, DesiredFlow, DesiredGroup, DesiredMeter } from '../pipeline/flow.js';
import { isAclLogMeter, isLogCopy, meterPlace } from '../pipeline/meters.js';
import { bitsOf, canonical, fieldMask, type Packet } from './packet.js';

/**
 * One bridge's OpenFlow pipeline run over a packet, from the desired flows and groups alone: what
 * OVS would do with it, step by step (`ofproto/trace` on the controller's side of the wire). Pure.
 *
 * Modelled as OVS does it: the highest-priority matching flow of a table; apply_actions at once,
 * write_metadata, goto_table; an ALL group runs each bucket on its own copy of the packet;
 * resubmit looks a table up in the middle of a flow's actions and comes back; an output to the
 * packet's own in_port is dropped unless it says IN_PORT; ct(table=N) starts another pass at N
 * with the conntrack state the caller chose (a trace has no connection table to ask); dec_ttl of
 * an IP packet whose TTL is 1 (or 0) ends the flow's actions there, goto_table included, so the
 * packet goes no further (OVS's "decrement TTL exception": weft asks for no packet-in of it). A
 * meter instruction leaves the packet as it is (one probe is within any rate) and is noted with
 * its rate: a reader of a trace of a rate-limited port learns where the limit applies. Setting
 * nd_options_type turns a neighbour discovery message's link-layer option into the other kind
 * (nd_sll <-> nd_tll), as it does on the wire.
 */

export interface SimStep {
  /** 0 = the first pass; each ct(table=N) recirculation is one more. */
  pass: number;
  /** Resubmit / group nesting depth (0 = the pipeline itself). */
  depth: number;
  table: number;
  /** undefined: no flow matched and the table has no table-miss flow (dropped). */
  flow?: DesiredFlow;
  /** The group this step ran inside, if any. */
  group?: number;
  /** Why the flow's actions stopped short (the TTL ran out): the packet went no further. */
  stopped?: string;
}

export interface SimOutput {
  pass: number;
  port: number;
  packet: Packet;
  /** The index in `steps` of the step whose flow sent it (its table, its cookie: who sent it up). */
  step: number;
}

export interface SimResult {
  steps: SimStep[];
  outputs: SimOutput[];
  /** Things OVS does that a reader may not expect (an output to in_port skipped, a missing group). */
  notes: string[];
}

export interface SimOptions {
  /** ct_state a packet has after ct(table=N): e.g. +trk+new (0x21) or +trk+est (0x22). */
  ctState: bigint;
}

const MAX_PASSES = 8;
const MAX_DEPTH = 64;
const MAX_STEPS = 4096;
const RESUBMIT_HERE = 255;

interface Run {
  desired: Desired;
  byTable: Map<number, DesiredFlow[]>;
  groups: Map<number, DesiredGroup>;
  meters: Map<number, DesiredMeter>;
  opts: SimOptions;
  result: SimResult;
  passes: Array<{ table: number; packet: Packet }>;
}

/** Flows of each table, highest priority first (stable: equal priorities keep their order). */
function tablesOf(desired: Desired): Map<number, DesiredFlow[]> {
  const byTable = new Map<number, DesiredFlow[]>();
  for (const f of desired.flows) {
    const list = byTable.get(f.tableId);
    if (list) list.push(f);
    else byTable.set(f.tableId, [f]);
  }
  for (const list of byTable.values()) list.sort((a, b) => b.priority - a.priority);
  return byTable;
}

/** A match field as bits, once per TLV object (apps share frozen TLVs across many flows). */
const tlvBits = new WeakMap<OxmTlv, { name: string; value: bigint; mask: bigint }>();

function bitsOfTlv(t: OxmTlv): { name: string; value: bigint; mask: bigint } {
  let b = tlvBits.get(t);
  if (!b) {
    const name = canonical(t.field);
    const mask = t.mask === undefined ? fieldMask(name) : bitsOf(name, t.mask);
    b = { name, value: bitsOf(name, t.value) & mask, mask };
    tlvBits.set(t, b);
  }
  return b;
}

export function matches(flow: DesiredFlow, p: Packet): boolean {
  for (const t of flow.match) {
    const { name, value, mask } = bitsOfTlv(t);
    const have = p.get(name);
    if (have === undefined || (have & mask) !== value) return false;
  }
  return true;
}

export function lookup(flows: readonly DesiredFlow[] | undefined, p: Packet): DesiredFlow | undefined {
  return flows?.find((f) => matches(f, p));
}

export function simulateBridge(desired: Desired, packet: Packet, opts: SimOptions): SimResult {
  const run: Run = {
    desired,
    byTable: tablesOf(desired),
    groups: new Map(desired.groups.map((g) => [g.groupId, g])),
    meters: new Map((desired.meters ?? []).map((m) => [m.meterId, m])),
    opts,
    result: { steps: [], outputs: [], notes: [] },
    passes: [{ table: 0, packet: new Map(packet) }],
  };
  for (let pass = 0; pass < run.passes.length; pass++) {
    if (pass >= MAX_PASSES) {
      run.result.notes.push(`stopped after ${MAX_PASSES} conntrack passes`);
      break;
    }
    const { table, packet: p } = run.passes[pass]!;
    pipeline(run, pass, table, p, 0);
  }
  return run.result;
}

/** Looks `table` up and follows goto_table from there; the packet is changed in place. */
function pipeline(run: Run, pass: number, table: number, p: Packet, depth: number): void {
  let next: number | undefined = table;
  while (next !== undefined) {
    if (run.result.steps.length >= MAX_STEPS) {
      run.result.notes.push(`stopped after ${MAX_STEPS} steps`);
      return;
    }
    const flow = lookup(run.byTable.get(next), p);
    run.result.steps.push({ pass, depth, table: next, ...(flow ? { flow } : {}) });
    if (!flow) return;
    next = instructions(run, pass, flow.instructions, p, depth);
  }
}

/** Runs a flow's instructions; returns the goto_table target, if any. */
function instructions(
  run: Run,
  pass: number,
  ins: readonly Instruction[],
  p: Packet,
  depth: number,
): number | undefined {
  let next: number | undefined;
  const at = run.result.steps.length - 1;
  const step = run.result.steps[at];
  for (const i of ins) {
    if (i.type === 'apply_actions') {
      const stopped = actions(run, pass, i.actions, p, depth, at);
      if (stopped) {
        // OVS turns the instructions into one action list, so the rest of it (goto too) is skipped.
        if (step) step.stopped = stopped;
        return undefined;
      }
    } else if (i.type === 'write_metadata') {
      const md = p.get('metadata') ?? 0n;
      p.set('metadata', (md & ~i.mask) | (i.metadata & i.mask));
    } else if (i.type === 'goto_table') next = i.tableId;
    else if (i.type === 'meter') note(run, meterNote(run, i.meterId));
    else if (i.type === 'write_actions' || i.type === 'clear_actions') {
      run.result.notes.push(`${i.type} is not modelled by the trace`);
    }
  }
  return next;
}

/** Adds a note once (a flood's copies can pass the same flow again). */
function note(run: Run, text: string): void {
  if (!run.result.notes.includes(text)) run.result.notes.push(text);
}

/**
 * `policed by meter 32770 (egress of port 1: 10000 kbit/s, burst 8000 kbit)`: what it limits
 * read back from weft's id layout, its rate from the desired meters (absent: only the id).
 */
function meterNote(run: Run, meterId: number): string {
  const place = meterPlace(meterId);
  const m = run.meters.get(meterId);
  const what = [
    place ? `${place.direction} of port ${place.ofport}` : undefined,
    m ? `${m.kbps} kbit/s, burst ${m.burstKb} kbit` : undefined,
  ];
  if (!what[0] && !what[1]) return `policed by meter ${meterId}`;
  return `policed by meter ${meterId} (${what.filter(Boolean).join(': ')})`;
}

/** set_field (or its NXM form) of a whole field, or of the bits under `mask`. */
function setField(p: Packet, field: string, value: OxmValue, mask: OxmValue | undefined): void {
  const name = canonical(field);
  const m = mask === undefined ? fieldMask(name) : bitsOf(name, mask);
  p.set(name, ((p.get(name) ?? 0n) & ~m) | (bitsOf(name, value) & m));
  if (name === ND_OPTIONS_TYPE) ndOption(p);
}

const ND_OPTIONS_TYPE = canonical('nd_options_type');
const ND_SLL = canonical('nd_sll');
const ND_TLL = canonical('nd_tll');
/** The link-layer address options of neighbour discovery (RFC 4861 4.6.1): source, target. */
const SLL_OPTION = 1n;
const TLL_OPTION = 2n;

/**
 * A neighbour discovery message's link-layer address option after its type was set: the same
 * option, now the other kind (the MAC in it stays until something writes the new field), as the
 * packet leaves. A solicitation carries nd_sll, an advertisement nd_tll, never both (OVS matches
 * each only on its own message type), so turning a solicitation into the advertisement in place
 * (apps/arp-responder/nd.ts) leaves an nd_tll and no nd_sll.
 */
function ndOption(p: Packet): void {
  const type = p.get(ND_OPTIONS_TYPE);
  if (type !== SLL_OPTION && type !== TLL_OPTION) return;
  const [from, to] = type === TLL_OPTION ? [ND_SLL, ND_TLL] : [ND_TLL, ND_SLL];
  const mac = p.get(from);
  if (mac === undefined) return;
  p.delete(from);
  if (!p.has(to)) p.set(to, mac);
}

function readSub(p: Packet, sf: Subfield): bigint {
  const v = p.get(canonical(sf.field)) ?? 0n;
  return (v >> BigInt(sf.ofs)) & ((1n << BigInt(sf.nBits)) - 1n);
}

function writeSub(p: Packet, sf: Subfield, bits: bigint): void {
  const name = canonical(sf.field);
  const mask = ((1n << BigInt(sf.nBits)) - 1n) << BigInt(sf.ofs);
  p.set(name, ((p.get(name) ?? 0n) & ~mask) | ((bits << BigInt(sf.ofs)) & mask));
  if (name === ND_OPTIONS_TYPE) ndOption(p);
}

/**
 * Runs an action list of the flow of step `at` (a resubmit's steps come after it); returns why it
 * stopped short, if it did (the rest is not run).
 */
function actions(
  run: Run,
  pass: number,
  list: readonly Action[],
  p: Packet,
  depth: number,
  at: number,
): string | undefined {
  for (const a of list) {
    const stopped = action(run, pass, a, p, depth, at);
    if (stopped) return stopped;
  }
  return undefined;
}

const TTL = canonical('nw_ttl');

/**
 * dec_ttl as OVS runs it: on a packet without an IP header it does nothing; at TTL 1 or 0 it
 * stops the actions (returns why).
 */
function decTtl(run: Run, p: Packet): string | undefined {
  const ttl = p.get(TTL);
  if (ttl === undefined) return undefined;
  if (ttl > 1n) {
    p.set(TTL, ttl - 1n);
    return undefined;
  }
  const why = `the TTL ran out (dec_ttl at TTL ${ttl}): OVS drops the packet`;
  run.result.notes.push(why);
  return why;
}

function action(run: Run, pass: number, a: Action, p: Packet, depth: number, at: number): string | undefined {
  const { result } = run;
  switch (a.type) {
    case 'output': {
      const inPort = Number(p.get('in_port') ?? 0n);
      if (a.port === ofpp.IN_PORT) result.outputs.push({ pass, port: inPort, packet: new Map(p), step: at });
      else if (a.port === inPort)
        result.notes.push(`output to port ${a.port}, the packet's in_port: OVS drops it`);
      else result.outputs.push({ pass, port: a.port, packet: new Map(p), step: at });
      return;
    }
    case 'set_field':
      setField(p, a.field, a.value, a.mask);
      return;
    case 'push_vlan':
      p.set('vlan_vid', 0x1000n);
      return;
    case 'pop_vlan':
      p.set('vlan_vid', 0n);
      return;
    case 'reg_move':
      writeSub(p, a.dst, readSub(p, a.src));
      return;
    case 'reg_load':
      writeSub(p, a.dst, a.value);
      return;
    case 'reg_load2':
      setField(p, a.field, a.value, a.mask);
      return;
    case 'group':
      group(run, pass, a.groupId, p, depth, at);
      return;
    case 'resubmit': {
      if (depth >= MAX_DEPTH) {
        result.notes.push(`resubmit deeper than ${MAX_DEPTH}: stopped`);
        return;
      }
      const here = result.steps.at(-1)?.table ?? 0;
      const table = a.table === RESUBMIT_HERE ? here : a.table;
      const inPort = p.get('in_port')!;
      if (a.port !== OFPP16_IN_PORT) p.set('in_port', BigInt(a.port));
      pipeline(run, pass, table, p, depth + 1);
      p.set('in_port', inPort);
      return;
    }
    case 'ct': {
      if (a.table === RESUBMIT_HERE) return; // commit or lookup without recirculation: the packet goes on
      const zone = typeof a.zone === 'number' ? BigInt(a.zone) : readSub(p, a.zone);
      const next = new Map(p);
      next.set('ct_state', run.opts.ctState);
      next.set('ct_zone', zone);
      ctNat(run, a, next);
      run.passes.push({ table: a.table, packet: next });
      return;
    }
    case 'ct_clear':
      p.set('ct_state', 0n);
      p.set('ct_zone', 0n);
      p.set('ct_mark', 0n);
      return;
    case 'dec_nw_ttl':
      return decTtl(run, p);
    case 'set_nw_ttl':
      // Only a packet with an IP header has a TTL to set.
      if (p.has(TTL)) p.set(TTL, BigInt(a.ttl));
      return;
    case 'note':
      return;
    case 'controller':
      // A security-group log copy is a record of the packet, not where it goes.
      if (isLogCopy(a)) {
        const whose = a.meterId !== undefined && isAclLogMeter(a.meterId) ? 'network ACL' : 'security-group';
        note(run, `a copy goes to the controller for the ${whose} log`);
        return;
      }
      result.outputs.push({ pass, port: ofpp.CONTROLLER, packet: new Map(p), step: at });
      return;
    default:
      result.notes.push(`action ${a.type} is not modelled by the trace`);
  }
}

/**
 * A NAT committed by a ct action, as a new connection's first packet meets it (the trace sends one
 * probe: there is no earlier connection whose answer a bare `nat` would translate back): a source
 * NAT (a router's SNAT, apps/router/snat.ts) leaves from the translated address; a destination
 * NAT (a port forward) goes on to the internal address, and to its port where the action names
 * one (a range keeps the port).
 */
function ctNat(run: Run, a: Extract<Action, { type: 'ct' }>, p: Packet): void {
  if (typeof a.zone !== 'number') return;
  if (!(a.flags & CT_COMMIT)) {
    // A lookup with a bare nat, as an established connection's packet: translated as its commit chose.
    const bare = a.actions.some((n) => n.type === 'nat' && (n.flags & (NAT_SRC | NAT_DST)) === 0);
    if (bare && run.opts.ctState & BigInt(CS.EST)) {
      run.result.notes.push(
        `an established connection's packet is translated here as its first packet was (conntrack zone ${a.zone}); this trace does not know which addresses that chose`,
      );
    }
    return;
  }
  for (const n of a.actions) {
    if (n.type !== 'nat' || n.ipv4Min === undefined) continue;
    if (n.flags & NAT_SRC) {
      setField(p, 'ipv4_src', n.ipv4Min, undefined);
      run.result.notes.push(`source translated to ${n.ipv4Min} (conntrack zone ${a.zone})`);
    } else if (n.flags & NAT_DST) {
      setField(p, 'ipv4_dst', n.ipv4Min, undefined);
      const l4 = p.has(TCP_DST) ? TCP_DST : p.has(UDP_DST) ? UDP_DST : undefined;
      if (n.protoMin !== undefined && l4) setField(p, l4, n.protoMin, undefined);
      const port = l4 ? `:${p.get(l4)}` : '';
      run.result.notes.push(`destination translated to ${n.ipv4Min}${port} (conntrack zone ${a.zone})`);
    }
  }
}

const TCP_DST = canonical('tcp_dst');
const UDP_DST = canonical('udp_dst');

function group(run: Run, pass: number, groupId: number, p: Packet, depth: number, at: number): void {
  const g = run.groups.get(groupId);
  if (!g) {
    run.result.notes.push(`group ${groupId} does not exist: dropped`);
    return;
  }
  const buckets = g.type === 'all' ? g.buckets : g.buckets.slice(0, 1);
  for (const b of buckets) {
    const copy = new Map(p);
    const start = run.result.steps.length;
    actions(run, pass, b.actions, copy, depth + 1, at);
    for (let i = start; i < run.result.steps.length; i++) {
      const s = run.result.steps[i]!;
      if (s.group === undefined) run.result.steps[i] = { ...s, group: groupId };
    }
  }
}
