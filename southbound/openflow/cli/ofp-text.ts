import {
  bundleCtrlTypeNames,
  type CtFlushFilter,
  type CtTupleFilter,
  ctFlushOf,
  ctFlushZoneOf,
  type ExperimenterMessage,
  errorName,
  helloVersions,
  type MultipartReplyBody,
  type OfpMessage,
  roleNames,
} from '../codec/index.js';
import { formatFlow, formatGroup } from '../text/index.js';

/**
 * One-line human form of a message for `weft ofp print`, modelled on `ovs-ofctl ofp-print`:
 * `OFPT_FLOW_MOD (xid=0x11): ADD table=20, priority=100,... actions=...`. Flows and groups use
 * the text module's ovs-ofctl syntax; other messages list their fields as key=value. A flow
 * stats reply prints one indented line per flow after its header line.
 */

/** FLOW_MOD commands as ovs-ofctl prints them. */
const commandNames = ['ADD', 'MOD', 'MOD_STRICT', 'DEL', 'DEL_STRICT'];
const groupCommands = ['ADD', 'MOD', 'DEL'];

function hex(n: number | bigint): string {
  return `0x${n.toString(16)}`;
}

/** key=value for the fields of a plain object, in declaration order. */
function fields(o: object, skip: readonly string[] = []): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (skip.includes(k) || v === undefined) continue;
    parts.push(`${k}=${value(v, k)}`);
  }
  return parts.join(' ');
}

/** Identifiers print in hex like ovs-ofctl does; counters in decimal. */
const hexKeys = new Set([
  'cookie',
  'cookieMask',
  'datapathId',
  'generationId',
  'metadataMatch',
  'metadataWrite',
]);

function value(v: unknown, key = ''): string {
  if (typeof v === 'bigint') return hexKeys.has(key) ? hex(v) : v.toString();
  if (Buffer.isBuffer(v)) return v.length === 0 ? '""' : v.toString('hex');
  if (Array.isArray(v)) return `[${v.map((x) => value(x)).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${fields(v)}}`;
  return String(v);
}

function multipartBody(b: MultipartReplyBody, prefix: string): string {
  switch (b.kind) {
    case 'FLOW':
      return [
        `${prefix} flows=${b.flows.length}`,
        ...b.flows.map((f) => ` ${formatFlow(f, { stats: true })}`),
      ].join('\n');
    case 'GROUP_DESC':
      return [
        `${prefix} groups=${b.groups.length}`,
        ...b.groups.map(
          (g) => ` ${formatGroup({ groupId: g.groupId, type: g.groupType, buckets: g.buckets })}`,
        ),
      ].join('\n');
    default:
      return `${prefix} ${fields(b, ['kind'])}`.trimEnd();
  }
}

/** One direction of a conntrack flush filter in ovs-ofctl ct-flush's words (only what it names). */
function ctTuple(t: CtTupleFilter, v6: boolean): string {
  const words: Array<[string, unknown]> = [
    [v6 ? 'ct_ipv6_src' : 'ct_nw_src', t.src],
    [v6 ? 'ct_ipv6_dst' : 'ct_nw_dst', t.dst],
    ['ct_tp_src', t.srcPort],
    ['ct_tp_dst', t.dstPort],
    ['icmp_id', t.icmpId],
    ['icmp_type', t.icmpType],
    ['icmp_code', t.icmpCode],
  ];
  return words
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

function ctFlushText(f: CtFlushFilter): string {
  const v6 = [f.orig?.src, f.orig?.dst, f.reply?.src, f.reply?.dst].some((a) => a?.includes(':'));
  const orig = [ctTuple(f.orig ?? {}, v6), f.ipProto !== undefined ? `ct_nw_proto=${f.ipProto}` : '']
    .filter(Boolean)
    .join(',');
  const reply = ctTuple(f.reply ?? {}, v6);
  const words = [f.zone !== undefined ? `zone=${f.zone}` : 'every zone'];
  if (orig || reply) words.push(`'${orig}'`);
  if (reply) words.push(`'${reply}'`);
  return words.join(' ');
}

/** The Nicira messages weft sends by name; any other experimenter message by its numbers. */
function experimenter(m: ExperimenterMessage): string {
  const zone = ctFlushZoneOf(m);
  if (zone !== undefined) return `NXT_CT_FLUSH_ZONE (xid=${hex(m.xid)}): zone_id=${zone}`;
  const filter = ctFlushOf(m);
  if (filter) return `NXT_CT_FLUSH (xid=${hex(m.xid)}): ${ctFlushText(filter)}`;
  return `OFPT_EXPERIMENTER (xid=${hex(m.xid)}): ${fields(m, ['type', 'xid'])}`;
}

export function formatMessage(m: OfpMessage): string {
  const head = `OFPT_${m.type} (xid=${hex(m.xid)}):`;
  switch (m.type) {
    case 'FLOW_MOD': {
      const extra = fields({
        cookieMask: m.cookieMask || undefined,
        bufferId: m.bufferId,
        outPort: m.outPort,
      });
      return `${head} ${commandNames[m.command] ?? m.command} ${formatFlow(m)} ${extra}`.trimEnd();
    }
    case 'GROUP_MOD':
      return `${head} ${groupCommands[m.command] ?? m.command} ${formatGroup({
        groupId: m.groupId,
        type: m.groupType,
        buckets: m.buckets,
      })}`;
    case 'HELLO': {
      const versions = helloVersions(m);
      const v = m.version !== undefined && m.version !== 4 ? ` version=0x${m.version.toString(16)}` : '';
      return `${head}${v}${versions ? ` versions=${versions.join(',')}` : ''}`;
    }
    case 'ERROR':
      return `${head} ${errorName(m.errType, m.code, m.experimenter)} data=${value(m.data)}`;
    case 'ROLE_REQUEST':
    case 'ROLE_REPLY':
    case 'ROLE_STATUS':
      return `${head} role=${roleNames[m.role] ?? m.role} ${fields(m, ['type', 'xid', 'role'])}`;
    case 'BUNDLE_CONTROL':
      return `${head} bundle_id=${hex(m.bundleId)} type=${bundleCtrlTypeNames[m.ctrlType] ?? m.ctrlType} flags=${m.flags}`;
    case 'BUNDLE_ADD':
      return `${head} bundle_id=${hex(m.bundleId)} flags=${m.flags} message: ${formatMessage(m.message.type === 'ENCODED' ? m.message.of : m.message)}`;
    case 'MULTIPART_REQUEST':
      return `${head} ${m.body.kind}${m.flags ? ' flags=more' : ''} ${fields(m.body, ['kind'])}`.trimEnd();
    case 'MULTIPART_REPLY':
      return multipartBody(m.body, `${head} ${m.body.kind}${m.flags ? ' flags=more' : ''}`);
    case 'EXPERIMENTER':
      return experimenter(m);
    default:
      return `${head} ${fields(m, ['type', 'xid'])}`.trimEnd();
  }
}
