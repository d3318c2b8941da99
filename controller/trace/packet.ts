import type { OxmValue } from '../../southbound/openflow/codec/oxm.js';
import { readValue, writeFieldValue } from '../../southbound/openflow/codec/oxm.js';
import { fieldByName, type OxmField } from '../../southbound/openflow/codec/oxm-fields.js';
import { OfWriter } from '../../southbound/openflow/codec/writer.js';

/**
 * A packet as the trace sees it: field name (the codec's canonical meta-flow name) -> value as a
 * bigint of the field's wire bits. A field the packet does not have (tcp_dst of a ping) is absent,
 * and a flow matching on it never matches, as OpenFlow prerequisites have it. Metadata, registers,
 * tunnel and conntrack fields always exist (0 until set).
 */
export type Packet = Map<string, bigint>;

const writer = new OfWriter(64);

function fieldOf(name: string): OxmField {
  const f = fieldByName(name);
  if (!f) throw new Error(`trace: unknown field ${name}`);
  return f;
}

/** The canonical name of a field spelled any way the codec knows (ipv4_src -> ip_src...). */
export const canonical = (name: string): string => {
  const n = fieldOf(name).name;
  // OVS's 16-bit NXM in_port is the same field as OpenFlow's (only it can be set, to 0 say).
  return n === 'in_port_nxm' ? 'in_port' : n;
};

/** All ones over the field's wire width. */
export const fieldMask = (name: string): bigint => (1n << BigInt(fieldOf(name).width * 8)) - 1n;

/** A match or set_field value (number, bigint, MAC or IP text) as the field's wire bits. */
export function bitsOf(name: string, value: OxmValue): bigint {
  const f = fieldOf(name);
  writer.reset();
  writeFieldValue(writer, f, value, undefined, `trace ${f.name}`);
  let v = 0n;
  for (let i = 0; i < f.width; i++) v = (v << 8n) | BigInt(writer.buf[i]!);
  return v;
}

/** Wire bits back to the codec's value form (MAC and IP text, numbers), for people. */
export function fieldText(name: string, bits: bigint): OxmValue {
  const f = fieldOf(name);
  const buf = Buffer.alloc(f.width);
  let v = bits;
  for (let i = f.width - 1; i >= 0; i--) {
    buf[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return readValue(buf, 0, f);
}

/** State that lives only inside one bridge: a packet arriving at another starts without it. */
const BRIDGE_STATE = [
  'metadata',
  'ct_state',
  'ct_zone',
  'ct_mark',
  ...Array.from({ length: 16 }, (_, i) => `reg${i}`),
].map(canonical);

/** Fields every packet has on a bridge, whatever its headers. */
const ALWAYS = ['in_port', 'tun_id', 'tun_src', 'tun_dst', 'vlan_vid'].map(canonical).concat(BRIDGE_STATE);

/** A packet with the given header fields (any spelling) and every always-present field at 0. */
export function packetOf(headers: Record<string, OxmValue>): Packet {
  const p: Packet = new Map(ALWAYS.map((f) => [f, 0n]));
  for (const [name, value] of Object.entries(headers)) p.set(canonical(name), bitsOf(name, value));
  return p;
}

/** The packet's headers as they leave one bridge for another: registers and conntrack state reset. */
export function onNextBridge(p: Packet, inPort: number): Packet {
  const next = new Map(p);
  for (const f of BRIDGE_STATE) next.set(f, 0n);
  next.set('in_port', BigInt(inPort));
  return next;
}

/** Fields read in hex, every digit shown: the ethertype, an advertisement's flags (R, S, O on top). */
const HEX = new Map([
  ['eth_type', 4],
  ['nd_reserved', 8],
]);

/** Readable form of a packet's fields (MACs and addresses as text), for the API answer. */
export function describePacket(p: Packet, fields: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const v = p.get(canonical(f));
    if (v === undefined) continue;
    const digits = HEX.get(f);
    out[f] = digits ? `0x${v.toString(16).padStart(digits, '0')}` : String(fieldText(f, v));
  }
  return out;
}
