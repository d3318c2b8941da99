import { allowedAddressesOf } from './allowed-addresses.js';
import { normalizeDhcp } from './dhcp-rules.js';
import { conflict, invalid } from './errors.js';
import type { AnyObject, Kind, ObjectOf, Qos, Quotas } from './model.js';
import { DEFAULT_UNDERLAY_MTU, VNI_MAX, VNI_MIN, VXLAN_OVERHEAD } from './model.js';
import {
  type Cidr,
  cidrContains,
  cidrsOverlap,
  isMulticastMac,
  LINK_LOCAL6,
  normalizeMac,
  parseCidr,
  parseIp,
} from './net.js';
import { quotasToStore } from './quotas.js';
import { checkNextHopsKept } from './router-routes.js';
import {
  checkEndpointIp,
  checkEndpointMac,
  checkNetworkSubnets,
  isRouterMac,
  router,
} from './router-rules.js';
import {
  type Draft,
  type Fields,
  immutable,
  mustRef,
  type RuleEnv,
  subnetsOf,
  tenantOf,
} from './rule-env.js';
import { mirror } from './rules-mirror.js';
import { networkAcl, securityGroup } from './rules-policy.js';
import { adminOnlyQos, qosToStore } from './rules-qos.js';
import { type IntentState, vlanSlot } from './state.js';

export type { Draft, RuleEnv } from './rule-env.js';

/**
 * The domain rules: given the current intent and a proposed object (all fields, no meta), check it
 * against the other objects and return it normalised. Pure apart from the injected generators.
 * Throws IntentError (invalid / conflict) naming the field.
 */

function cidrList(list: string[], field: string): Cidr[] {
  const out: Cidr[] = [];
  for (const [i, s] of list.entries()) {
    const c = parseCidr(s);
    if (typeof c === 'string') throw invalid(`${field}[${i}]`, c);
    const clash = out.find((o) => cidrsOverlap(o, c));
    if (clash) throw invalid(`${field}[${i}]`, `'${c.text}' overlaps '${clash.text}'`);
    out.push(c);
  }
  return out;
}

const MULTICAST6 = parseCidr('ff00::/8') as Cidr;

/**
 * Why an IPv6 prefix cannot be a network's subnet: every link has fe80::/10 already (the router's
 * link-local address lives there and answers neighbour discovery), multicast is no place for
 * hosts, and ::/0 holds both.
 */
function notASubnet(c: Cidr): string | undefined {
  if (c.family !== 6) return undefined;
  if (c.prefix === 0) return 'is every IPv6 address';
  if (cidrsOverlap(c, LINK_LOCAL6)) return 'is link-local (fe80::/10, on every link already)';
  if (cidrsOverlap(c, MULTICAST6)) return 'is multicast (ff00::/8)';
  return undefined;
}

function minUnderlayMtu(state: IntentState): number {
  let min = Number.POSITIVE_INFINITY;
  for (const c of state.all('chassis').values()) min = Math.min(min, c.underlayMtu);
  return Number.isFinite(min) ? min : DEFAULT_UNDERLAY_MTU;
}

function allocateVni(env: RuleEnv): number {
  const [lo, hi] = env.vniRange;
  // Next-fit from the last allocation keeps allocation O(1) on average.
  const start = Math.min(Math.max(env.vniCursor.last + 1, lo), hi);
  for (let v = start, n = 0; n <= hi - lo; n++, v = v === hi ? lo : v + 1) {
    if (!env.state.vnis.has(v) && !env.state.mirrorVnis.has(v)) {
      env.vniCursor.last = v;
      return v;
    }
  }
  throw conflict('vni', `no free VNI left in ${lo}-${hi}`);
}

function network(env: RuleEnv, d: Draft, existing?: ObjectOf['network']): Fields<'network'> {
  immutable(d, existing, 'tenantId');
  // The VNI names the network on the wire and derives its router MAC: it is fixed at creation.
  immutable(d, existing, 'vni');
  const tenantId = tenantOf(env, d, existing);
  let vni = (d.vni as number | undefined) ?? existing?.vni;
  if (vni === undefined) vni = allocateVni(env);
  else if (!Number.isInteger(vni) || vni < VNI_MIN || vni > VNI_MAX) {
    throw invalid('vni', `${vni} is reserved or out of range; use ${VNI_MIN}-${VNI_MAX}`);
  }
  const owner = env.state.vnis.get(vni);
  if (owner !== undefined && owner !== d.id)
    throw conflict('vni', `${vni} is already used by another network`);
  const mirrorOwner = env.state.mirrorVnis.get(vni);
  if (mirrorOwner !== undefined) throw conflict('vni', `${vni} is already used by a mirror`);
  const subnets = cidrList((d.subnets as string[] | undefined) ?? [], 'subnets');
  for (const [i, c] of subnets.entries()) {
    const why = notASubnet(c);
    if (why) throw invalid(`subnets[${i}]`, `${c.text} ${why}; give the network's own prefix`);
  }
  if (existing && subnets.length > 0) {
    for (const [ip] of env.state.ips.get(d.id) ?? []) {
      const a = parseIp(ip)!;
      if (!subnets.some((c) => cidrContains(c, a))) {
        throw conflict('subnets', `endpoint address ${ip} would lie outside every subnet`);
      }
    }
  }
  if (existing) checkNetworkSubnets(env.state, d.id, subnets);
  const mtu = (d.mtu as number | undefined) ?? existing?.mtu ?? minUnderlayMtu(env.state) - VXLAN_OVERHEAD;
  const out: Fields<'network'> = {
    id: d.id,
    tenantId,
    name: d.name as string,
    vni,
    mtu,
    subnets: subnets.map((c) => c.text),
  };
  const dhcp = normalizeDhcp(d.dhcp, subnets);
  if (dhcp) out.dhcp = dhcp;
  return out;
}

function endpoint(env: RuleEnv, d: Draft, existing?: ObjectOf['endpoint']): Fields<'endpoint'> {
  immutable(d, existing, 'networkId');
  const net = mustRef(env, 'network', d.networkId as string, 'networkId');
  if (d.tenantId !== undefined && d.tenantId !== net.tenantId) {
    throw invalid('tenantId', `must be the network's tenant '${net.tenantId}'`);
  }
  const macs = env.state.macs.get(net.id);
  let mac: string;
  if (d.mac !== undefined) {
    const m = normalizeMac(d.mac as string);
    if (!m) throw invalid('mac', `'${d.mac}' is not a MAC address (xx:xx:xx:xx:xx:xx)`);
    if (isMulticastMac(m)) throw invalid('mac', `${m} is a multicast address; endpoints need unicast`);
    if (m === '00:00:00:00:00:00') throw invalid('mac', 'the all-zero address is not usable');
    checkEndpointMac(m);
    const owner = macs?.get(m);
    if (owner !== undefined && owner !== d.id)
      throw conflict('mac', `${m} is already used in network '${net.id}'`);
    mac = m;
  } else if (existing) {
    mac = existing.mac;
  } else {
    do mac = env.randomMac();
    while (macs?.has(mac) || isRouterMac(mac));
  }
  const subnets = subnetsOf(net);
  const ips: string[] = [];
  const taken = env.state.ips.get(net.id);
  for (const [i, s] of ((d.ips as string[] | undefined) ?? []).entries()) {
    const a = parseIp(s);
    if (!a) throw invalid(`ips[${i}]`, `'${s}' is not an IPv4 or IPv6 address`);
    if (ips.includes(a.text)) throw invalid(`ips[${i}]`, `${a.text} is listed twice`);
    if (subnets.length > 0 && !subnets.some((c) => cidrContains(c, a))) {
      throw conflict(
        `ips[${i}]`,
        `${a.text} is outside the subnets of network '${net.id}' (${net.subnets.join(', ')})`,
      );
    }
    const owner = taken?.get(a.text);
    if (owner !== undefined && owner !== d.id)
      throw conflict(`ips[${i}]`, `${a.text} is already used in network '${net.id}'`);
    checkEndpointIp(env.state, net.id, a.text, `ips[${i}]`);
    ips.push(a.text);
  }
  // A route's next hop keeps its address until the route changes (router-routes.ts).
  if (existing) checkNextHopsKept(env.state, existing, ips);
  const ifaceId = (d.ifaceId as string | undefined) ?? existing?.ifaceId ?? d.id;
  const ifaceOwner = env.state.ifaceIds.get(ifaceId);
  if (ifaceOwner !== undefined && ifaceOwner !== d.id) {
    throw conflict('ifaceId', `'${ifaceId}' is already bound to endpoint '${ifaceOwner}'`);
  }
  const securityGroupIds = (d.securityGroupIds as string[] | undefined) ?? [];
  for (const [i, sg] of securityGroupIds.entries()) {
    if (securityGroupIds.indexOf(sg) !== i)
      throw invalid(`securityGroupIds[${i}]`, `'${sg}' is listed twice`);
    mustRef(env, 'securityGroup', sg, `securityGroupIds[${i}]`, net.tenantId);
  }
  const portSecurity = (d.portSecurity as boolean | undefined) ?? true;
  if (!portSecurity && securityGroupIds.length > 0) {
    throw invalid(
      'portSecurity',
      'security groups need port security; remove them or keep portSecurity true',
    );
  }
  const allowedAddresses = allowedAddressesOf(env, d, net, ips, portSecurity);
  const out: Fields<'endpoint'> = {
    id: d.id,
    tenantId: net.tenantId,
    networkId: net.id,
    mac,
    ips,
    ifaceId,
    securityGroupIds,
    portSecurity,
  };
  if (d.name !== undefined) out.name = d.name as string;
  if (allowedAddresses) out.allowedAddresses = allowedAddresses;
  // Checked when it changes: a PATCH of something else keeps limits set under an older MTU.
  const qos = qosToStore(d.qos as Qos | undefined, existing?.qos, net);
  adminOnlyQos(env, qos, existing?.qos, "an endpoint's");
  if (qos) out.qos = qos;
  return out;
}

function chassis(env: RuleEnv, d: Draft): Fields<'chassis'> {
  const ip = parseIp(d.tunnelIp as string);
  if (!ip) throw invalid('tunnelIp', `'${d.tunnelIp}' is not an IPv4 or IPv6 address`);
  const owner = env.state.tunnelIps.get(ip.text);
  if (owner !== undefined && owner !== d.id)
    throw conflict('tunnelIp', `${ip.text} is already chassis '${owner}'`);
  return {
    id: d.id,
    name: d.name as string,
    tunnelIp: ip.text,
    bridge: (d.bridge as string | undefined) ?? 'br-int',
    datapathType: (d.datapathType as 'system' | 'netdev' | undefined) ?? 'system',
    offload: (d.offload as 'none' | 'asap2' | undefined) ?? 'none',
    underlayMtu: (d.underlayMtu as number | undefined) ?? DEFAULT_UNDERLAY_MTU,
  };
}

function vlanBinding(env: RuleEnv, d: Draft, existing?: ObjectOf['vlanBinding']): Fields<'vlanBinding'> {
  immutable(d, existing, 'chassisId');
  mustRef(env, 'chassis', d.chassisId as string, 'chassisId');
  mustRef(env, 'network', d.networkId as string, 'networkId');
  const slot = vlanSlot(d.chassisId as string, d.port as string, d.vlan as number);
  const owner = env.state.vlanSlots.get(slot);
  if (owner !== undefined && owner !== d.id) {
    throw conflict('vlan', `VLAN ${d.vlan} on ${d.chassisId}/${d.port} is already bound by '${owner}'`);
  }
  return {
    id: d.id,
    chassisId: d.chassisId as string,
    port: d.port as string,
    vlan: d.vlan as number,
    networkId: d.networkId as string,
  };
}

function token(_env: RuleEnv, d: Draft, existing?: ObjectOf['token']): Fields<'token'> {
  if (!existing)
    throw invalid(undefined, 'tokens are created with createToken (POST /v1/tokens), not written');
  return { id: d.id, tenantId: existing.tenantId, name: d.name as string, hash: existing.hash };
}

function tenant(env: RuleEnv, d: Draft, existing?: ObjectOf['tenant']): Fields<'tenant'> {
  const out: Fields<'tenant'> = { id: d.id, name: d.name as string };
  if (d.description !== undefined) out.description = d.description as string;
  const qos = qosToStore(d.qos as Qos | undefined, existing?.qos, { id: '', mtu: 1500 });
  adminOnlyQos(env, qos, existing?.qos, "a tenant's default");
  if (qos) out.qos = qos;
  const quotas = quotasToStore(env, d.quotas as Quotas | undefined, existing?.quotas);
  if (quotas) out.quotas = quotas;
  return out;
}

/** Checks and normalises a full proposed object of `kind` (create, replace or patched). */
export function buildObject(
  kind: Kind,
  env: RuleEnv,
  d: Draft,
  existing?: AnyObject,
): Record<string, unknown> {
  const ex = existing as never;
  switch (kind) {
    case 'tenant':
      return tenant(env, d, ex);
    case 'network':
      return network(env, d, ex);
    case 'endpoint':
      return endpoint(env, d, ex);
    case 'securityGroup':
      return securityGroup(env, d, ex);
    case 'networkAcl':
      return networkAcl(env, d, ex);
    case 'chassis':
      return chassis(env, d);
    case 'vlanBinding':
      return vlanBinding(env, d, ex);
    case 'router':
      return router(env, d, ex);
    case 'mirror':
      return mirror(env, d, ex, () => allocateVni(env));
    case 'token':
      return token(env, d, ex);
  }
}
