import { UsageError } from '../../controller/cli/command.js';
import type { Column } from './format.js';
import type { FieldFlag } from './resource-command.js';

/**
 * An endpoint's rate limits on the command line: `--egress-kbps N [--egress-burst-kb N]`,
 * `--ingress-kbps N [--ingress-burst-kb N]` make the body's `qos` member (kbit/s; the API fills
 * in a burst left out), `--dscp N` the DSCP marked on what the VM sends, `--no-qos` sends
 * `qos: {}` (no limits, no marking). Directions are the endpoint's, as for security groups:
 * egress is what the VM sends, ingress what it receives.
 */
const DIRECTIONS = ['egress', 'ingress'] as const;
type Direction = (typeof DIRECTIONS)[number];

interface RateLimit {
  kbps?: number;
  burstKb?: number;
}
type QosBody = Partial<Record<Direction, RateLimit>> & { dscp?: number };

export const qosFlags: FieldFlag[] = [
  ...DIRECTIONS.flatMap((dir): FieldFlag[] => [
    {
      flag: `${dir}-kbps`,
      field: `qos.${dir}.kbps`,
      type: 'int',
      help: `limit what the VM ${dir === 'egress' ? 'sends' : 'receives'} to N kbit/s (8-100000000); update keeps the other direction`,
    },
    {
      flag: `${dir}-burst-kb`,
      field: `qos.${dir}.burstKb`,
      type: 'int',
      help: `kbit let through above --${dir}-kbps (default 80% of a second's worth, at least two full frames)`,
    },
  ]),
  {
    flag: 'dscp',
    field: 'qos.dscp',
    type: 'int',
    help: 'mark every IP packet the VM sends with DSCP N (0-63; 46 EF, 34 AF41), on the tunnel too; update keeps the limits',
  },
  {
    flag: 'no-qos',
    field: 'qos',
    type: 'flag',
    help: 'no rate limits and no marking (update: removes them)',
    parse: () => ({}),
  },
];

/**
 * What the qos flags cannot say alone: a burst is only meaningful above a rate (and the API
 * takes each direction whole), and --no-qos contradicts any limit given with it.
 */
export function checkQos(body: Record<string, unknown>, given: ReadonlySet<string>): void {
  if (given.has('no-qos')) {
    const limit = qosFlags.find((f) => f.flag !== 'no-qos' && given.has(f.flag));
    if (limit) throw new UsageError(`--no-qos removes every limit: it cannot be given with --${limit.flag}`);
  }
  const qos = body.qos as QosBody | undefined;
  for (const dir of DIRECTIONS) {
    if (given.has(`${dir}-burst-kb`) && qos?.[dir]?.kbps === undefined)
      throw new UsageError(
        `--${dir}-burst-kb needs --${dir}-kbps: a burst is what is let through above a rate`,
      );
  }
}

/**
 * `update --egress-kbps N` changes the egress limit and keeps the ingress one and the marking
 * (the API's PATCH replaces `qos` whole): the endpoint is read and what the flags did not name
 * is carried over; so does `update --dscp N` with the limits. --no-qos and a `qos` given whole
 * in --data are taken as they are.
 */
export const qosMerge = {
  wants: (given: ReadonlySet<string>): boolean =>
    !given.has('no-qos') && (given.has('dscp') || DIRECTIONS.some((dir) => given.has(`${dir}-kbps`))),
  merge(body: Record<string, unknown>, current: Record<string, unknown>, given: ReadonlySet<string>): void {
    const had = (current.qos ?? {}) as QosBody;
    const qos = body.qos as QosBody;
    for (const dir of DIRECTIONS) if (!given.has(`${dir}-kbps`) && !qos[dir] && had[dir]) qos[dir] = had[dir];
    if (!given.has('dscp') && qos.dscp === undefined && had.dscp !== undefined) qos.dscp = had.dscp;
  },
};

const limitText = (r: RateLimit): string =>
  `${r.kbps} kbit/s${r.burstKb === undefined ? '' : ` (burst ${r.burstKb} kbit)`}`;

const limitsOf = (v: unknown): Array<[Direction, RateLimit]> => {
  const qos = (v ?? {}) as QosBody;
  return DIRECTIONS.flatMap((dir) => (qos[dir] ? [[dir, qos[dir]] as [Direction, RateLimit]] : []));
};
const dscpText = (v: unknown): string[] => {
  const dscp = (v as QosBody | undefined)?.dscp;
  return dscp === undefined ? [] : [`dscp ${dscp}`];
};

/** `egress 10000 kbit/s (burst 8000 kbit), ingress ..., dscp 46`, or `none`: the `qos:` line of show. */
export const qosText = (v: unknown): string => {
  const parts = [...limitsOf(v).map(([dir, r]) => `${dir} ${limitText(r)}`), ...dscpText(v)];
  return parts.length === 0 ? 'none' : parts.join(', ');
};

/** The list's QOS column: the rates and marking only (the burst is in show), `-` without any. */
export const qosColumn: Column = {
  header: 'QOS',
  value: (o) => {
    const parts = [...limitsOf(o.qos).map(([dir, r]) => `${dir} ${r.kbps} kbit/s`), ...dscpText(o.qos)];
    return parts.length === 0 ? '-' : parts.join(', ');
  },
};
