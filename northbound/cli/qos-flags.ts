import { UsageError } from '../../controller/cli/command.js';
import type { Column } from './format.js';
import type { FieldFlag } from './resource-command.js';

/**
 * An endpoint's rate limits on the command line: `--egress-kbps N [--egress-burst-kb N]`,
 * `--ingress-kbps N [--ingress-burst-kb N]` make the body's `qos` member (kbit/s; the API fills
 * in a burst left out), `--no-qos` sends `qos: {}` (no limits). Directions are the endpoint's, as
 * for security groups: egress is what the VM sends, ingress what it receives.
 */
const DIRECTIONS = ['egress', 'ingress'] as const;
type Direction = (typeof DIRECTIONS)[number];

interface RateLimit {
  kbps?: number;
  burstKb?: number;
}

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
    flag: 'no-qos',
    field: 'qos',
    type: 'flag',
    help: 'no rate limits (update: removes them)',
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
  const qos = body.qos as Partial<Record<Direction, RateLimit>> | undefined;
  for (const dir of DIRECTIONS) {
    if (given.has(`${dir}-burst-kb`) && qos?.[dir]?.kbps === undefined)
      throw new UsageError(
        `--${dir}-burst-kb needs --${dir}-kbps: a burst is what is let through above a rate`,
      );
  }
}

/**
 * `update --egress-kbps N` changes the egress limit and keeps the ingress one (the API's PATCH
 * replaces `qos` whole): the endpoint is read and the direction the flags did not name is
 * carried over. --no-qos and a `qos` given whole in --data are taken as they are.
 */
export const qosMerge = {
  wants: (given: ReadonlySet<string>): boolean =>
    !given.has('no-qos') && DIRECTIONS.some((dir) => given.has(`${dir}-kbps`)),
  merge(body: Record<string, unknown>, current: Record<string, unknown>, given: ReadonlySet<string>): void {
    const had = (current.qos ?? {}) as Partial<Record<Direction, RateLimit>>;
    const qos = body.qos as Partial<Record<Direction, RateLimit>>;
    for (const dir of DIRECTIONS) if (!given.has(`${dir}-kbps`) && !qos[dir] && had[dir]) qos[dir] = had[dir];
  },
};

const limitText = (r: RateLimit): string =>
  `${r.kbps} kbit/s${r.burstKb === undefined ? '' : ` (burst ${r.burstKb} kbit)`}`;

const limitsOf = (v: unknown): Array<[Direction, RateLimit]> => {
  const qos = (v ?? {}) as Partial<Record<Direction, RateLimit>>;
  return DIRECTIONS.flatMap((dir) => (qos[dir] ? [[dir, qos[dir]] as [Direction, RateLimit]] : []));
};

/** `egress 10000 kbit/s (burst 8000 kbit), ingress ...`, or `none`: the `qos:` line of show. */
export const qosText = (v: unknown): string => {
  const limits = limitsOf(v);
  return limits.length === 0 ? 'none' : limits.map(([dir, r]) => `${dir} ${limitText(r)}`).join(', ');
};

/** The list's QOS column: the rates only (the burst is in show), `-` without limits. */
export const qosColumn: Column = {
  header: 'QOS',
  value: (o) => {
    const limits = limitsOf(o.qos);
    return limits.length === 0 ? '-' : limits.map(([dir, r]) => `${dir} ${r.kbps} kbit/s`).join(', ');
  },
};
