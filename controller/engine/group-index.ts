import type { SecurityGroup } from '../intent/model.js';
import { type Dirty, entry } from './index-records.js';

/**
 * The security groups the engine reads, with who is in each (every endpoint naming it, placed or
 * not: remote-group rules list every member's addresses) and which groups name each as remote
 * group. A change marks the local units of the endpoints whose resolved rules it changes, and the
 * groups whose resolved rules DesiredModel must recompute (`staleRules`).
 */
export class GroupIndex {
  readonly securityGroups = new Map<string, SecurityGroup>();
  /** security group -> endpoints naming it. */
  readonly members = new Map<string, Set<string>>();
  /** Security groups whose resolved rules must be recomputed (DesiredModel drops its cache of them). */
  readonly staleRules = new Set<string>();
  /** security group -> groups with a rule naming it as remote group. */
  private readonly referrers = new Map<string, Set<string>>();

  constructor(private readonly dirty: Dirty) {}

  /** A group written (`after`) or deleted (`before` only): its own members' rules are stale. */
  changed(id: string, before: SecurityGroup | undefined, after: SecurityGroup | undefined): void {
    if (before) {
      this.securityGroups.delete(before.id);
      for (const r of before.rules)
        if (r.remoteGroupId) this.referrers.get(r.remoteGroupId)?.delete(before.id);
    }
    if (after) this.load(after);
    this.rulesChanged(id);
  }

  /** A group as the index starts (nothing is stale yet). */
  load(sg: SecurityGroup): void {
    this.securityGroups.set(sg.id, sg);
    for (const r of sg.rules)
      if (r.remoteGroupId) entry(this.referrers, r.remoteGroupId, () => new Set<string>()).add(sg.id);
  }

  /** An endpoint joins a group; `addressesChanged`: the groups naming it as remote are stale. */
  join(sgId: string, endpointId: string, addressesChanged: boolean): void {
    entry(this.members, sgId, () => new Set<string>()).add(endpointId);
    if (addressesChanged) this.membersChanged(sgId);
  }

  leave(sgId: string, endpointId: string, addressesChanged: boolean): void {
    const set = this.members.get(sgId);
    set?.delete(endpointId);
    if (set?.size === 0) this.members.delete(sgId);
    if (addressesChanged) this.membersChanged(sgId);
  }

  /** A group's rules changed: its members' local units are stale. */
  private rulesChanged(sgId: string): void {
    this.staleRules.add(sgId);
    for (const ep of this.members.get(sgId) ?? []) this.dirty.localUnits.add(ep);
  }

  /** A group's membership (or a member's addresses) changed: groups naming it as remote are stale. */
  private membersChanged(sgId: string): void {
    for (const referrer of this.referrers.get(sgId) ?? []) this.rulesChanged(referrer);
  }
}
