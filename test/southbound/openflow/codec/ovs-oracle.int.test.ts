import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  ctFlush,
  ctFlushZone,
  encodeMessage,
  type OfpMessage,
  ofpp,
} from '../../../../southbound/openflow/codec/index.js';
import { fixtureBytes, wireFixtures } from '../../../fixtures/openflow/wire-fixtures.js';
import { samples } from './message-samples.js';

/**
 * OVS as the oracle: every message we encode that OVS knows must be decoded by
 * `ovs-ofctl ofp-print HEX` (OVS 3.1, pure decode: no daemon, no socket) without error, to the
 * expected text.
 */

const execFileP = promisify(execFile);

async function ofpPrint(bytes: Uint8Array): Promise<{ out: string; err: string }> {
  const { stdout, stderr } = await execFileP('ovs-ofctl', ['ofp-print', Buffer.from(bytes).toString('hex')]);
  return { out: stdout, err: stderr };
}

const extra: { name: string; msg: OfpMessage; ovs: RegExp | string }[] = [
  {
    name: 'FLOW_MOD with masks, ct and resubmit',
    msg: {
      type: 'FLOW_MOD',
      xid: 0x40,
      command: 0,
      tableId: 10,
      priority: 200,
      idleTimeout: 30,
      flags: 1,
      match: [
        { field: 'in_port', value: 1 },
        { field: 'eth_type', value: 0x0800 },
        { field: 'ipv4_dst', value: '10.1.0.0', mask: '255.255.0.0' },
        { field: 'reg3', value: 7 },
      ],
      instructions: [
        { type: 'write_metadata', metadata: 0x5n, mask: 0xffn },
        {
          type: 'apply_actions',
          actions: [
            { type: 'ct', flags: 1, zone: 5, table: 255, alg: 0, actions: [] },
            { type: 'resubmit', port: 0xfff8, table: 30 },
          ],
        },
        { type: 'goto_table', tableId: 20 },
      ],
    },
    ovs: /ADD table:10 priority=200,ip,reg3=0x7,in_port=1,nw_dst=10\.1\.0\.0\/16 idle:30 .*actions=ct\(commit,zone=5\),resubmit\(,30\),write_metadata:0x5\/0xff,goto_table:20/,
  },
  {
    // nd_reserved and nd_options_type are Ericsson-class OXMs (0x1000): apps/nd-responder's answer.
    name: 'FLOW_MOD turning a neighbour solicitation into the advertisement',
    msg: {
      type: 'FLOW_MOD',
      xid: 0x42,
      command: 0,
      tableId: 31,
      priority: 100,
      match: [
        { field: 'eth_type', value: 0x86dd },
        { field: 'ip_proto', value: 58 },
        { field: 'icmpv6_type', value: 136 },
        { field: 'icmpv6_code', value: 0 },
      ],
      instructions: [
        {
          type: 'apply_actions',
          actions: [
            {
              type: 'reg_move',
              src: { field: 'ipv6_src', ofs: 0, nBits: 128 },
              dst: { field: 'ipv6_dst', ofs: 0, nBits: 128 },
            },
            {
              type: 'reg_move',
              src: { field: 'nd_target', ofs: 0, nBits: 128 },
              dst: { field: 'ipv6_src', ofs: 0, nBits: 128 },
            },
            { type: 'set_field', field: 'nd_options_type', value: 2 },
            { type: 'set_field', field: 'nd_reserved', value: 0xe0000000 },
            {
              type: 'reg_move',
              src: { field: 'eth_src', ofs: 0, nBits: 48 },
              dst: { field: 'nd_tll', ofs: 0, nBits: 48 },
            },
            { type: 'output', port: ofpp.IN_PORT, maxLen: 0 },
          ],
        },
      ],
    },
    ovs: 'ADD table:31 priority=100,icmp6,icmp_type=136,icmp_code=0 actions=move:NXM_NX_IPV6_SRC[]->NXM_NX_IPV6_DST[],move:NXM_NX_ND_TARGET[]->NXM_NX_IPV6_SRC[],set_field:2->nd_options_type,set_field:3758096384->nd_reserved,move:NXM_OF_ETH_SRC[]->NXM_NX_ND_TLL[],IN_PORT',
  },
  {
    // A router's SNAT zone forgotten when its address changes (controller/engine/nat-flush.ts).
    name: 'NXT_CT_FLUSH_ZONE',
    msg: { ...ctFlushZone(33564), xid: 0x43 },
    ovs: /NXT_CT_FLUSH_ZONE.*zone_id=33564/,
  },
  {
    // A removed port forward's connections (controller/engine/nat-flush.ts).
    name: 'NXT_CT_FLUSH of one zone, original destination address and port',
    msg: { ...ctFlush({ zone: 33000, ipProto: 6, orig: { dst: '10.0.0.1', dstPort: 8080 } }), xid: 0x44 },
    ovs: "NXT_CT_FLUSH (OF1.3) (xid=0x44): zone=33000 'ct_nw_src=::,ct_nw_dst=10.0.0.1,ct_tp_src=0,ct_tp_dst=8080,ct_nw_proto=6' 'ct_nw_src=::,ct_nw_dst=::,ct_tp_src=0,ct_tp_dst=0'",
  },
  {
    // A lost SNAT address's connections: their answers go to it.
    name: 'NXT_CT_FLUSH of one zone, reply destination only',
    msg: { ...ctFlush({ zone: 7, reply: { dst: '192.0.2.9' } }), xid: 0x45 },
    ovs: "zone=7 'ct_nw_src=::,ct_nw_dst=::,ct_tp_src=0,ct_tp_dst=0,ct_nw_proto=0' 'ct_nw_src=::,ct_nw_dst=192.0.2.9,ct_tp_src=0,ct_tp_dst=0'",
  },
  {
    name: 'NXT_CT_FLUSH of every zone, IPv6 and ICMPv6, both directions',
    msg: {
      ...ctFlush({
        ipProto: 58,
        orig: { src: '2001:db8::1', icmpId: 9, icmpType: 128 },
        reply: { src: '2001:db8::2', dst: '2001:db8::1' },
      }),
      xid: 0x46,
    },
    // ofp-print says zone=0 for a filter without one (the switch flushes every zone: ct-flush.int.test.ts).
    ovs: "'ct_ipv6_src=2001:db8::1,ct_ipv6_dst=::,icmp_id=9,icmp_type=128,icmp_code=0,ct_nw_proto=58' 'ct_ipv6_src=2001:db8::2,ct_ipv6_dst=2001:db8::1,icmp_id=0,icmp_type=0,icmp_code=0'",
  },
  {
    name: 'PACKET_OUT with no data to a buffered packet',
    msg: {
      type: 'PACKET_OUT',
      xid: 0x41,
      bufferId: 7,
      inPort: 3,
      actions: [{ type: 'output', port: ofpp.FLOOD, maxLen: 0 }],
      data: Buffer.alloc(0),
    },
    ovs: 'in_port=3 actions=FLOOD buffer=0x00000007',
  },
];

describe('ovs-ofctl ofp-print decodes what we encode', () => {
  const cases = [...samples.filter((s) => s.ovs !== undefined), ...extra];
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { out, err } = await ofpPrint(encodeMessage(c.msg));
    expect(out).not.toMatch(/decode error|\*\*\*/);
    expect(err).not.toMatch(/WARN|ERR/);
    if (typeof c.ovs === 'string') expect(out).toContain(c.ovs);
    else expect(out).toMatch(c.ovs!);
  });
});

/** Fixtures OVS cannot print without error, and why. */
const notForOvs = new Map([
  ['MULTIPART_REQUEST EXPERIMENTER', 'unknown experimenter id: OVS answers BAD_VENDOR'],
  ['MULTIPART_REPLY TABLE_FEATURES with an unknown property', 'OVS requires all 14 standard properties'],
  ['unknown message type (OpenFlow 1.4 TABLE_STATUS, kept opaque)', 'not an OpenFlow 1.3 type'],
]);

describe('ovs-ofctl ofp-print accepts the annotated wire fixtures', () => {
  const cases = wireFixtures.filter((f) => !notForOvs.has(f.name));
  it.each(cases.map((f) => [f.name, f] as const))('%s', async (_name, f) => {
    const { out, err } = await ofpPrint(fixtureBytes(f.hex));
    expect(out).not.toMatch(/decode error|\*\*\*/);
    expect(err).not.toMatch(/WARN|ERR/);
  });
});
