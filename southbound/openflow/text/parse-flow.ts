import { type Bucket, WATCH_ANY } from '../codec/buckets.js';
import { FLOW_FLAGS, type FlowText, type GroupText, type GroupType } from './flow-text.js';
import { OFP_DEFAULT_PRIORITY } from './format-match.js';
import { parseActionList, parseInstructions } from './parse-actions.js';
import { MatchBuilder } from './parse-match.js';
import { parseBig, parsePort32, parseUint } from './ports.js';
import { keyValue, OfTextError, splitTop } from './text-error.js';

/** Index of `key=` at a token boundary (start, after a space or a comma), or -1. */
function findKey(text: string, key: string): number {
  let i = text.indexOf(key);
  while (i >= 0) {
    const before = i === 0 ? ' ' : text[i - 1]!;
    if (before === ' ' || before === ',' || before === '\t') return i;
    i = text.indexOf(key, i + 1);
  }
  return -1;
}

function parseDuration(tok: string, v: string): [number, number] {
  const m = /^(\d+)(?:\.(\d{1,9}))?s?$/.exec(v);
  if (!m) throw new OfTextError(tok, 'expected duration=SECONDS[.FRACTION]s');
  return [Number(m[1]), m[2] === undefined ? 0 : Number(m[2].padEnd(9, '0'))];
}

/**
 * A flow in ovs-ofctl add-flow syntax, or a dump-flows line (with or without stats): match fields,
 * table/priority/cookie/timeouts/flags, and `actions=` (which must come last).
 */
export function parseFlow(text: string): FlowText {
  const at = findKey(text, 'actions=');
  if (at < 0) throw new OfTextError(text.trim(), 'a flow needs actions= (e.g. "actions=drop")');
  const head = text.slice(0, at);
  const f: FlowText = { tableId: 0, priority: OFP_DEFAULT_PRIORITY, match: [], instructions: [] };
  const mb = new MatchBuilder();
  for (const tok of splitTop(head, ', \t\r\n')) {
    const [key, value] = keyValue(tok, false);
    const n = (max: number) => {
      const v = value === undefined ? undefined : parseUint(value);
      if (v === undefined || v > max) throw new OfTextError(tok, `expected ${key}=0..${max}`);
      return v;
    };
    const big = () => {
      const v = value === undefined ? undefined : parseBig(value);
      if (v === undefined || v >> 64n) throw new OfTextError(tok, `expected ${key}=<64-bit number>`);
      return v;
    };
    switch (key) {
      case 'table':
        f.tableId = n(255);
        continue;
      case 'priority':
        f.priority = n(0xffff);
        continue;
      case 'cookie':
        f.cookie = big();
        continue;
      case 'idle_timeout':
        f.idleTimeout = n(0xffff);
        continue;
      case 'hard_timeout':
        f.hardTimeout = n(0xffff);
        continue;
      case 'importance':
        f.importance = n(0xffff);
        continue;
      case 'duration':
        [f.durationSec, f.durationNsec] = parseDuration(tok, value ?? '');
        continue;
      case 'n_packets':
        f.packetCount = big();
        continue;
      case 'n_bytes':
        f.byteCount = big();
        continue;
      case 'idle_age':
      case 'hard_age':
        continue;
    }
    const flag = FLOW_FLAGS.find(([, name]) => name === key);
    if (flag && value === undefined) {
      f.flags = (f.flags ?? 0) | flag[0];
      continue;
    }
    if (!mb.add(tok, key, value)) throw new OfTextError(tok, `unknown match field or flow option '${key}'`);
  }
  f.match = mb.build();
  const proto = f.match.find((t) => t.field === 'nw_proto');
  f.instructions = parseInstructions(
    text.slice(at + 'actions='.length),
    proto ? { nwProto: Number(proto.value) } : {},
  );
  return f;
}

const GROUP_TYPES: Record<string, GroupType> = {
  all: 'all',
  select: 'select',
  indirect: 'indirect',
  ff: 'ff',
  fast_failover: 'ff',
};

function parseBucket(text: string, type: GroupType): Bucket {
  const b: Bucket = {
    weight: type === 'select' ? 1 : 0,
    watchPort: WATCH_ANY,
    watchGroup: WATCH_ANY,
    actions: [],
  };
  const at = findKey(text, 'actions=');
  // Without "actions=", bucket options and actions share one comma list (ovs-ofctl allows it).
  const head = at < 0 ? text : text.slice(0, at);
  const actions = at < 0 ? '' : text.slice(at + 'actions='.length);
  const rest: string[] = [];
  for (const tok of splitTop(head, ',')) {
    const [k, v] = keyValue(tok);
    if (k === 'weight') {
      const w = parseUint(v ?? '');
      if (w === undefined || w > 0xffff) throw new OfTextError(tok, 'expected weight:0..65535');
      b.weight = w;
    } else if (k === 'watch_port') {
      const p = parsePort32(v ?? '');
      if (p === undefined) throw new OfTextError(tok, `'${v}' is not a port`);
      b.watchPort = p;
    } else if (k === 'watch_group') {
      const g = parseUint(v ?? '');
      if (g === undefined || g > 0xffffffff) throw new OfTextError(tok, 'expected watch_group:GROUP');
      b.watchGroup = g;
    } else if (k === 'bucket_id') {
      // OpenFlow 1.5 only; ignored for 1.3 like ovs-ofctl does.
    } else {
      rest.push(tok);
    }
  }
  b.actions = parseActionList([...rest, actions].filter((s) => s.length > 0).join(','));
  return b;
}

/** A group in ovs-ofctl add-group syntax (also a dump-groups line). */
export function parseGroup(text: string): GroupText {
  const parts = text.trim().split(/,bucket=|\s+bucket=/);
  const head = parts.shift() ?? '';
  let groupId: number | undefined;
  let type: GroupType | undefined;
  for (const tok of splitTop(head, ', \t')) {
    const [k, v] = keyValue(tok, false);
    if (k === 'group_id') {
      const g = parseUint(v ?? '');
      if (g === undefined || g > 0xffffff00) throw new OfTextError(tok, 'expected group_id=0..4294967040');
      groupId = g;
    } else if (k === 'type') {
      type = GROUP_TYPES[v ?? ''];
      if (!type) throw new OfTextError(tok, 'type must be all, select, indirect or ff (fast_failover)');
    } else {
      throw new OfTextError(tok, `unknown group option '${k}'`);
    }
  }
  if (groupId === undefined) throw new OfTextError(text.trim(), 'a group needs group_id=');
  if (type === undefined) throw new OfTextError(text.trim(), 'a group needs type=');
  const t = type;
  return { groupId, type: t, buckets: parts.map((p) => parseBucket(p, t)) };
}
