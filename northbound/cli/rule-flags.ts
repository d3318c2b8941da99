import { UsageError } from '../../controller/cli/command.js';
import { type Column, cell } from './format.js';
import type { FieldFlag } from './resource-command.js';

/**
 * What a security-group rule or a network ACL matches beyond its protocol, on the command line:
 * a destination port range (tcp, udp) or an ICMP type and code (icmp), and how the lists show them.
 */

/** `80`, `80-443` -> [min, max]. */
const portRange = (text: string, flag: string): [number, number] => {
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text);
  if (!m) throw new UsageError(`${flag}: '${text}' is not a port or port range like 80 or 8000-8080`);
  return [Number(m[1]), Number(m[2] ?? m[1])];
};

/** `type=8`, `type=3/4` (type 3, code 4) -> [type, code?]. */
const icmpTypeCode = (text: string, flag: string): [number, number | undefined] => {
  const m = /^type=([0-9]{1,3})(?:\/([0-9]{1,3}))?$/.exec(text);
  if (!m) throw new UsageError(`${flag}: '${text}' is not an ICMP type like type=8 or type=3/4 (type/code)`);
  return [Number(m[1]), m[2] === undefined ? undefined : Number(m[2])];
};

const RULE_FORM = 'DIRECTION,ETHERTYPE,PROTOCOL[,PORTS|type=T[/CODE]][,remote=CIDR|group=ID]';

/**
 * `--rule DIRECTION,ETHERTYPE,PROTOCOL[,PORTS|type=T[/CODE]][,remote=CIDR|group=ID]`, e.g.
 * `ingress,ipv4,tcp,22,remote=10.0.0.0/8` or `ingress,ipv4,icmp,type=8`. Each --rule adds one;
 * together they replace the rules.
 */
export const parseRule = (text: string): Record<string, unknown> => {
  const [direction, ethertype, protocol, ...rest] = text.split(',');
  if (!direction || !ethertype || !protocol) throw new UsageError(`--rule '${text}': expected ${RULE_FORM}`);
  const rule: Record<string, unknown> = { direction, ethertype, protocol };
  for (const part of rest) {
    if (part.startsWith('remote=')) rule.remoteCidr = part.slice(7);
    else if (part.startsWith('group=')) rule.remoteGroupId = part.slice(6);
    else if (part.startsWith('type=')) {
      const [type, code] = icmpTypeCode(part, '--rule');
      rule.icmpType = type;
      if (code !== undefined) rule.icmpCode = code;
    } else [rule.portMin, rule.portMax] = portRange(part, '--rule');
  }
  return rule;
};

/** `80`, `80-443`, `type 8`, `type 3/4`, or undefined when the rule matches neither. */
const matchText = (r: Record<string, unknown>): string | undefined => {
  if (r.icmpType !== undefined)
    return `type ${r.icmpType}${r.icmpCode === undefined ? '' : `/${r.icmpCode}`}`;
  if (r.portMin === undefined) return undefined;
  return r.portMin === r.portMax ? String(r.portMin) : `${r.portMin}-${r.portMax}`;
};

/** The RULES column of `weft security-group list`. */
export const rulesOf = (o: Record<string, unknown>): string =>
  cell(
    ((o.rules as Array<Record<string, unknown>>) ?? []).map((r) =>
      [
        r.direction,
        r.protocol,
        matchText(r),
        r.remoteCidr ?? (r.remoteGroupId ? `sg:${r.remoteGroupId}` : undefined),
      ]
        .filter((x) => x !== undefined)
        .join(' '),
    ),
  );

/** ACL port ranges travel as portMin/portMax; the CLI takes one --ports flag. */
export const ports: FieldFlag = {
  flag: 'ports',
  field: 'portMin',
  type: 'custom',
  spread: true,
  help: 'port or range, e.g. 80 or 8000-8080',
  parse: (v) => {
    const [portMin, portMax] = portRange(v.at(-1)!, '--ports');
    return { portMin, portMax };
  },
};

/** `weft acl create|update --icmp-type N [--icmp-code N]` (protocol icmp). */
export const icmpFlags: FieldFlag[] = [
  {
    flag: 'icmp-type',
    field: 'icmpType',
    type: 'int',
    help: 'with --protocol icmp: only this ICMP type (0-255)',
  },
  { flag: 'icmp-code', field: 'icmpCode', type: 'int', help: 'with --icmp-type: only this code (0-255)' },
];

/** The PORTS column of `weft acl list`: the port range, or the ICMP type and code. */
export const aclPortsColumn: Column = { header: 'PORTS', value: (o) => matchText(o) ?? '-' };
