import { conflict, invalid } from './errors.js';
import type { ObjectOf } from './model.js';
import { MIRROR_MAX_PER_DESTINATION, MIRROR_MAX_PER_SOURCE, VNI_MAX, VNI_MIN } from './model.js';
import { type Draft, type Fields, immutable, mustRef, type RuleEnv, tenantOf } from './rule-env.js';

/**
 * The mirror's rules: both endpoints exist in the mirror's tenant and differ, a source is copied
 * by a bounded number of mirrors, and the VNI its copies carry is unique among networks and
 * mirrors (the receiving switch tells a copy from a network's traffic by it alone); a destination
 * receives from a bounded number of mirrors too.
 */
export function mirror(
  env: RuleEnv,
  d: Draft,
  existing: ObjectOf['mirror'] | undefined,
  allocateVni: () => number,
): Fields<'mirror'> {
  immutable(d, existing, 'tenantId');
  immutable(d, existing, 'vni');
  const sourceId = d.source as string;
  const source = mustRef(env, 'endpoint', sourceId, 'source');
  if (d.tenantId === undefined && !existing) d.tenantId = source.tenantId;
  const tenantId = tenantOf(env, d, existing);
  mustRef(env, 'endpoint', sourceId, 'source', tenantId);
  const destinationId = d.destination as string;
  mustRef(env, 'endpoint', destinationId, 'destination', tenantId);
  if (destinationId === sourceId)
    throw invalid('destination', `is the source '${sourceId}' itself: a mirror copies to another endpoint`);
  const others = otherMirrors(env, d.id, 'source', sourceId);
  if (others.length >= MIRROR_MAX_PER_SOURCE) {
    throw conflict(
      'source',
      `endpoint '${sourceId}' is already copied by ${others.length} mirrors (${others.map((m) => m.id).join(', ')}); at most ${MIRROR_MAX_PER_SOURCE}`,
    );
  }
  const into = otherMirrors(env, d.id, 'destination', destinationId);
  if (into.length >= MIRROR_MAX_PER_DESTINATION) {
    throw conflict(
      'destination',
      `endpoint '${destinationId}' already receives the copies of ${into.length} mirrors; at most ${MIRROR_MAX_PER_DESTINATION}`,
    );
  }
  let vni = (d.vni as number | undefined) ?? existing?.vni;
  if (vni === undefined) vni = allocateVni();
  else if (!Number.isInteger(vni) || vni < VNI_MIN || vni > VNI_MAX) {
    throw invalid('vni', `${vni} is reserved or out of range; use ${VNI_MIN}-${VNI_MAX}`);
  }
  // Owners are not named: they may be another tenant's.
  if (env.state.vnis.has(vni)) throw conflict('vni', `${vni} is already used by a network`);
  const owner = env.state.mirrorVnis.get(vni);
  if (owner !== undefined && owner !== d.id)
    throw conflict('vni', `${vni} is already used by another mirror`);
  const out: Fields<'mirror'> = {
    id: d.id,
    tenantId,
    source: sourceId,
    destination: destinationId,
    direction: (d.direction as ObjectOf['mirror']['direction'] | undefined) ?? 'both',
    vni,
    enabled: (d.enabled as boolean | undefined) ?? true,
  };
  if (d.name !== undefined) out.name = d.name as string;
  return out;
}

/** The mirrors other than `selfId` naming `endpointId` as their `end`. */
function otherMirrors(
  env: RuleEnv,
  selfId: string,
  end: 'source' | 'destination',
  endpointId: string,
): ObjectOf['mirror'][] {
  const out: ObjectOf['mirror'][] = [];
  for (const key of env.state.referrersOf('endpoint', endpointId, 'mirror')) {
    const m = env.state.get('mirror', key.slice('mirror/'.length));
    if (m && m.id !== selfId && m[end] === endpointId) out.push(m);
  }
  return out;
}
