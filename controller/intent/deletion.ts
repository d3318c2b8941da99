import { conflict } from './errors.js';
import type { Kind } from './model.js';
import { checkNextHopsGone } from './router-routes.js';
import { type IntentState, keyOf, parseKey } from './state.js';

/**
 * Which objects a delete removes. Dependants (a network's endpoints, ACLs, VLAN bindings and
 * router; a tenant's networks, security groups, routers, mirrors and tokens; a chassis' VLAN
 * bindings; an endpoint's mirrors)
 * block the delete with a conflict unless `cascade` is set, in which case they go in the same
 * transaction. A security group still used by an endpoint or another group's rule always blocks
 * (cascade would silently open or close traffic on endpoints the caller did not name), and so does
 * an endpoint that is the next hop of a router's route, unless the router goes in the same delete.
 */
const CASCADES: Partial<Record<Kind, Kind[]>> = {
  tenant: ['network', 'securityGroup', 'router', 'mirror', 'token'],
  // A router is deleted whole with any of its networks: one without that interface is a different
  // router (other addresses reachable), which the caller should write on purpose.
  network: ['endpoint', 'networkAcl', 'vlanBinding', 'router'],
  chassis: ['vlanBinding'],
  // A mirror names two endpoints; without either it copies nothing anyone asked for.
  endpoint: ['mirror'],
};

export function planDelete(state: IntentState, kind: Kind, id: string, cascade: boolean): string[] {
  const keys: string[] = [keyOf(kind, id)];
  const seen = new Set(keys);
  for (let i = 0; i < keys.length; i++) {
    const k = parseKey(keys[i]!)!;
    if (k.kind === 'securityGroup') {
      const users = state.referrersOf(k.kind, k.id).filter((r) => !seen.has(r));
      // Within a tenant cascade the users may be deleted too; check again at the end.
      if (users.length > 0 && !cascade) {
        throw conflict(undefined, `security group '${k.id}' is still used by ${describe(users)}`, {
          referrers: users,
        });
      }
      continue;
    }
    const dependants = (CASCADES[k.kind] ?? []).flatMap((c) => state.referrersOf(k.kind, k.id, c));
    const fresh = dependants.filter((r) => !seen.has(r));
    if (fresh.length > 0 && !cascade) {
      throw conflict(
        undefined,
        `${k.kind} '${k.id}' still has ${describe(fresh)}; delete them first or use cascade`,
        { dependants: fresh },
      );
    }
    for (const r of fresh) {
      seen.add(r);
      keys.push(r);
    }
  }
  // After a cascade every remaining reference must point at something that stays.
  for (const key of keys) {
    const k = parseKey(key)!;
    if (k.kind === 'endpoint') {
      const ep = state.get('endpoint', k.id);
      if (ep) checkNextHopsGone(state, ep, seen);
      continue;
    }
    if (k.kind !== 'securityGroup') continue;
    const outside = state.referrersOf(k.kind, k.id).filter((r) => !seen.has(r));
    if (outside.length > 0) {
      throw conflict(undefined, `security group '${k.id}' is still used by ${describe(outside)}`, {
        referrers: outside,
      });
    }
  }
  return keys;
}

function describe(keys: string[]): string {
  const counts = new Map<string, number>();
  for (const k of keys) {
    const kind = k.slice(0, k.indexOf('/'));
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  const parts = [...counts].map(([kind, n]) => `${n} ${kind}${n === 1 ? '' : 's'}`);
  const sample = keys.length <= 3 ? ` (${keys.join(', ')})` : '';
  return parts.join(', ') + sample;
}
