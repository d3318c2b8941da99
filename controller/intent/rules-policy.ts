import { invalid } from './errors.js';
import type { ObjectOf, SgLog, SgRule, SgRuleInput } from './model.js';
import { parseCidr } from './net.js';
import { type Draft, type Fields, immutable, mustRef, type RuleEnv, tenantOf } from './rule-env.js';

/**
 * The policies' rules: security groups (each rule's ports or ICMP type, its remote side) and
 * network ACLs. What a rule matches beyond its protocol: a port range only with tcp or udp, an
 * ICMP type (and code) only with icmp; addresses of the rule's family.
 */

function ports(d: Draft, protocol: string): void {
  const min = d.portMin as number | undefined;
  const max = d.portMax as number | undefined;
  if (min === undefined && max === undefined) return;
  if (protocol !== 'tcp' && protocol !== 'udp') {
    throw invalid(
      min !== undefined ? 'portMin' : 'portMax',
      `port ranges need protocol tcp or udp, not ${protocol}`,
    );
  }
  if (min === undefined) throw invalid('portMin', 'is required with portMax');
  if (max === undefined) d.portMax = min;
  else if (min > max) throw invalid('portMin', `${min} is greater than portMax ${max}`);
}

/** icmpType/icmpCode: only with protocol icmp, and a code only with a type. */
function icmpFields(d: Draft, protocol: string): void {
  const type = d.icmpType as number | undefined;
  const code = d.icmpCode as number | undefined;
  if (type === undefined && code === undefined) return;
  if (protocol !== 'icmp')
    throw invalid(type !== undefined ? 'icmpType' : 'icmpCode', `needs protocol icmp, not ${protocol}`);
  if (type === undefined) throw invalid('icmpCode', 'needs icmpType (a code belongs to one type)');
}

function cidrText(d: Draft, field: string, family?: 4 | 6): 4 | 6 | undefined {
  const s = d[field] as string | undefined;
  if (s === undefined) return family;
  const c = parseCidr(s);
  if (typeof c === 'string') throw invalid(field, c);
  if (family && c.family !== family) throw invalid(field, `is IPv${c.family} but the rule is IPv${family}`);
  d[field] = c.text;
  return c.family;
}

function sgRule(
  env: RuleEnv,
  r: SgRuleInput,
  i: number,
  sgId: string,
  tenantId: string,
  seen: Set<string>,
): SgRule {
  const d: Draft = { ...r, id: r.id ?? env.newId() };
  const at = (f: string) => `rules[${i}].${f}`;
  if (seen.has(d.id)) throw invalid(at('id'), `'${d.id}' is used by two rules`);
  seen.add(d.id);
  try {
    ports(d, r.protocol);
    icmpFields(d, r.protocol);
    cidrText(d, 'remoteCidr', r.ethertype === 'ipv4' ? 4 : 6);
  } catch (e) {
    const err = e as { field?: string };
    throw invalid(at(err.field ?? '?'), (e as Error).message.replace(/^[^:]+: /, ''));
  }
  if (r.remoteCidr !== undefined && r.remoteGroupId !== undefined) {
    throw invalid(at('remoteGroupId'), 'give remoteCidr or remoteGroupId, not both');
  }
  if (r.remoteGroupId !== undefined && r.remoteGroupId !== sgId) {
    mustRef(env, 'securityGroup', r.remoteGroupId, at('remoteGroupId'), tenantId);
  }
  const out: Record<string, unknown> = {
    id: d.id,
    direction: r.direction,
    ethertype: r.ethertype,
    protocol: r.protocol,
  };
  for (const f of ['portMin', 'portMax', 'icmpType', 'icmpCode', 'remoteCidr', 'remoteGroupId'])
    if (d[f] !== undefined) out[f] = d[f];
  return out as SgRule;
}

export function securityGroup(
  env: RuleEnv,
  d: Draft,
  existing?: ObjectOf['securityGroup'],
): Fields<'securityGroup'> {
  immutable(d, existing, 'tenantId');
  const tenantId = tenantOf(env, d, existing);
  const seen = new Set<string>();
  const rules = ((d.rules as SgRuleInput[] | undefined) ?? []).map((r, i) =>
    sgRule(env, r, i, d.id, tenantId, seen),
  );
  const out: Fields<'securityGroup'> = { id: d.id, tenantId, name: d.name as string, rules };
  // `log` only when given (even 'off'): absent stays absent, as in groups made before logging.
  if (d.log !== undefined) out.log = d.log as SgLog;
  return out;
}

export function networkAcl(env: RuleEnv, d: Draft, existing?: ObjectOf['networkAcl']): Fields<'networkAcl'> {
  immutable(d, existing, 'networkId');
  const net = mustRef(env, 'network', d.networkId as string, 'networkId');
  if (d.tenantId !== undefined && d.tenantId !== net.tenantId) {
    throw invalid('tenantId', `must be the network's tenant '${net.tenantId}'`);
  }
  ports(d, d.protocol as string);
  icmpFields(d, d.protocol as string);
  cidrText(d, 'dstCidr', cidrText(d, 'srcCidr'));
  const out: Record<string, unknown> = {
    id: d.id,
    tenantId: net.tenantId,
    networkId: net.id,
    priority: d.priority,
    direction: d.direction,
    action: d.action,
    protocol: d.protocol,
  };
  // `log` only when given (even false): absent stays absent, as in ACLs made before logging.
  for (const f of ['srcCidr', 'dstCidr', 'portMin', 'portMax', 'icmpType', 'icmpCode', 'log'])
    if (d[f] !== undefined) out[f] = d[f];
  return out as Fields<'networkAcl'>;
}
