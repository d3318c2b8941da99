/**
 * What changed in the chassis facts since the last report: the iface-ids whose binding may
 * differ and the chassis whose ports may differ. A facts source that can say this spares the
 * engine a walk over every binding of every chassis (100,000 at 1,000 hypervisors) each time one
 * VM port appears; one that cannot reports no delta, and the engine compares everything.
 */
export interface FactsDelta {
  readonly ifaces: ReadonlySet<string>;
  readonly chassis: ReadonlySet<string>;
}

/**
 * The facts changes reported since the engine last computed, merged: the union of the deltas,
 * or 'all' once any report came without one.
 */
export class PendingFacts {
  private ifaces = new Set<string>();
  private chassis = new Set<string>();
  private all = false;
  private any = false;

  add(delta: FactsDelta | undefined): void {
    this.any = true;
    if (this.all) return;
    if (!delta) {
      this.all = true;
      this.ifaces.clear();
      this.chassis.clear();
      return;
    }
    for (const i of delta.ifaces) this.ifaces.add(i);
    for (const c of delta.chassis) this.chassis.add(c);
  }

  /** The merged change and a fresh start; undefined when nothing was reported. */
  take(): FactsDelta | 'all' | undefined {
    if (!this.any) return undefined;
    const out: FactsDelta | 'all' = this.all ? 'all' : { ifaces: this.ifaces, chassis: this.chassis };
    this.ifaces = new Set();
    this.chassis = new Set();
    this.all = false;
    this.any = false;
    return out;
  }
}
