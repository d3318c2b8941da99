import { WATCH_ANY } from '../codec/buckets.js';
import { FLOW_FLAGS, type FlowText, type GroupText } from './flow-text.js';
import { formatActions, formatInstructions } from './format-actions.js';
import { formatMatch } from './format-match.js';
import { formatPort32 } from './ports.js';

/** ofp_print_duration: seconds, then 3 decimals if the nanoseconds are whole ms, else 9. */
function formatDuration(sec: number, nsec: number): string {
  if (nsec <= 0) return `${sec}s`;
  const frac = String(nsec).padStart(9, '0');
  return `${sec}.${nsec % 1_000_000 === 0 ? frac.slice(0, 3) : frac}s`;
}

/**
 * One flow as `ovs-ofctl -O OpenFlow13 dump-flows` prints it, without the leading space. With
 * `stats` (default: whether the flow carries a duration) it is the full dump line
 * ("cookie=0x0, duration=1.5s, table=0, n_packets=0, n_bytes=0, priority=..."); without, the
 * `--no-stats` form ("table=20, priority=100,... actions=...").
 */
export function formatFlow(f: FlowText, opts: { stats?: boolean } = {}): string {
  const stats = opts.stats ?? f.durationSec !== undefined;
  let s = '';
  const cookie = f.cookie ?? 0n;
  if (stats || cookie !== 0n) s += `cookie=0x${cookie.toString(16)}, `;
  if (stats) s += `duration=${formatDuration(f.durationSec ?? 0, f.durationNsec ?? 0)}, `;
  if (stats || f.tableId !== 0) s += `table=${f.tableId}, `;
  if (stats) s += `n_packets=${f.packetCount ?? 0n}, n_bytes=${f.byteCount ?? 0n}, `;
  if (f.idleTimeout) s += `idle_timeout=${f.idleTimeout}, `;
  if (f.hardTimeout) s += `hard_timeout=${f.hardTimeout}, `;
  for (const [bit, name] of FLOW_FLAGS) if ((f.flags ?? 0) & bit) s += `${name} `;
  if (f.importance) s += `importance=${f.importance}, `;
  s += formatMatch(f.match, f.priority);
  if (s.length > 0 && !s.endsWith(' ')) s += ' ';
  return `${s}actions=${formatInstructions(f.instructions)}`;
}

/** One group as `ovs-ofctl -O OpenFlow13 dump-groups` prints it, without the leading space. */
export function formatGroup(g: GroupText): string {
  let s = `group_id=${g.groupId},type=${g.type}`;
  for (const b of g.buckets) {
    s += ',bucket=';
    if (g.type === 'select' && b.weight !== 1) s += `weight:${b.weight},`;
    if (b.watchPort !== WATCH_ANY) s += `watch_port:${formatPort32(b.watchPort)},`;
    if (b.watchGroup !== WATCH_ANY) s += `watch_group:${b.watchGroup},`;
    s += `actions=${formatActions(b.actions)}`;
  }
  return s;
}
