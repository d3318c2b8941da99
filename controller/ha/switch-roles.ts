import type { Logger } from 'pino';
import { ofpet } from '../../southbound/openflow/codec/index.js';
import type { RoleChange, RoleName } from '../../southbound/openflow/session/events.js';
import { setRole } from '../../southbound/openflow/session/operations.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import type { SwitchSession } from '../../southbound/openflow/session/switch-session.js';
import type { Leadership } from './leadership.js';

/** What the glue drives besides the switches: the engine (and the chassis manager's writes). */
export interface HaWriters {
  /** Engine.setActive: false = compute but never write. */
  setActive(active: boolean): void;
  /** A switch the engine should track (after its role is settled). */
  attach(sw: SwitchSession): void;
  detach(sw: SwitchSession): void;
}

export interface SwitchRolesOptions {
  /** How long becoming leader waits for MASTER answers before activating anyway (default 2000 ms). */
  roleTimeoutMs?: number;
}

const isStale = (err: unknown) =>
  err instanceof OfpErrorReply && err.errorType === ofpet.ROLE_REQUEST_FAILED && err.code === 0; // OFPRRFC_STALE

/**
 * OpenFlow roles follow leadership:
 * - leader: every switch gets ROLE_REQUEST MASTER with generation_id = our term, before the engine
 *   (attached, then activated) writes anything; a switch connecting later gets MASTER, then attach.
 * - standby: SLAVE on every switch; the engine is attached but inactive (desired state kept hot).
 * - stepping down: engine inactive FIRST (nothing more is written), then SLAVE, best effort.
 * - a STALE answer, or a role-status demoting us while we lead, means a newer term exists:
 *   step down. OVS itself keeps at most one MASTER per bridge and refuses the deposed one's writes.
 */
export class SwitchRoles {
  private readonly roleTimeoutMs: number;
  private activating = 0;

  constructor(
    private readonly registry: SwitchRegistry,
    private readonly leadership: Leadership,
    private readonly writers: HaWriters,
    private readonly log: Logger,
    opts: SwitchRolesOptions = {},
  ) {
    this.roleTimeoutMs = opts.roleTimeoutMs ?? 2000;
    writers.setActive(false);
    registry.on('switch-up', (sw) => void this.onSwitchUp(sw));
    registry.on('switch-down', (sw) => writers.detach(sw));
    registry.on('role', (sw, change) => this.onRole(sw, change));
    leadership.on('leader', ({ term }) => void this.becomeLeader(term));
    leadership.on('follower', ({ term, reason }) => void this.becomeFollower(term, reason));
  }

  private async onSwitchUp(sw: SwitchSession): Promise<void> {
    // If leadership changes while a request is out, the role change path sends its own request
    // to every registered switch (this one included) after ours, so the switch ends right. The
    // checks right before each request run in the same tick as its write.
    if (!this.leadership.isLeader) await this.ensureSlave(sw);
    if (this.leadership.isLeader) await this.request(sw, 'master', this.leadership.term);
    if (sw.state === 'up') this.writers.attach(sw);
  }

  private async becomeLeader(term: number): Promise<void> {
    const epoch = ++this.activating;
    const switches = this.registry.list();
    const started = performance.now();
    const granted = await Promise.all(switches.map((sw) => this.request(sw, 'master', term)));
    if (epoch !== this.activating || !this.leadership.isLeader || this.leadership.term !== term) return;
    this.writers.setActive(true);
    const fields = {
      instance: this.leadership.instanceId,
      term,
      switches: switches.length,
      ms: Math.round((performance.now() - started) * 10) / 10,
    };
    // Failover figures are read from this line: it claims every switch only when each one answered.
    const unconfirmed = switches.filter((_, i) => !granted[i]).map((sw) => sw.dpid);
    if (unconfirmed.length === 0) this.log.info(fields, 'MASTER on every switch; engine active');
    else
      this.log.warn(
        { ...fields, unconfirmed },
        `MASTER not confirmed by ${unconfirmed.length} of ${switches.length} switches; engine active anyway (its writes queue behind the ROLE_REQUEST)`,
      );
  }

  private async becomeFollower(term: number, reason: string): Promise<void> {
    const epoch = ++this.activating;
    this.writers.setActive(false); // first: nothing more leaves this instance
    const gen = Math.max(term, await this.slaveTerm());
    if (epoch !== this.activating) return; // leading again meanwhile
    const switches = this.registry.list();
    const granted = await Promise.all(
      switches.map(async (sw) => (await this.request(sw, 'slave', gen)) || (await this.ensureSlave(sw))),
    );
    if (epoch !== this.activating) return; // leading again meanwhile: not SLAVE anywhere
    const unconfirmed = switches.filter((_, i) => !granted[i]).map((sw) => sw.dpid);
    const fields = { instance: this.leadership.instanceId, term, reason };
    if (unconfirmed.length === 0) this.log.info(fields, 'SLAVE on every switch');
    else this.log.warn({ ...fields, unconfirmed }, 'SLAVE not confirmed by every switch (disconnected)');
  }

  private onRole(sw: SwitchSession, change: RoleChange): void {
    if (!this.leadership.isLeader) return;
    const ours = BigInt(this.leadership.term);
    const demoted = change.cause === 'role-status' && change.role === 'slave';
    const stale = change.cause === 'stale' && change.role === 'master';
    if (!demoted && !stale) return;
    if (demoted && change.generationId < ours) return; // an old notification
    this.log.warn(
      {
        instance: this.leadership.instanceId,
        term: this.leadership.term,
        dpid: sw.dpid,
        cause: change.cause,
        generationId: String(change.generationId),
      },
      'a switch says another controller is master with a newer generation',
    );
    this.leadership.stepDown(
      `switch ${sw.dpid} reported ${change.cause} (generation ${change.generationId})`,
    );
  }

  /**
   * SLAVE until the switch grants it, we lead, or the switch goes. A SLAVE request is refused as
   * STALE when its generation is older than one the switch saw: a standby that came up before
   * Redis answered only knows term 0. Left as it is, the switch would keep this instance EQUAL,
   * free to write, so it retries with the term re-read, backing off up to 2 s. True once granted.
   */
  private async ensureSlave(sw: SwitchSession): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (this.leadership.isLeader || sw.state !== 'up') return false;
      const gen = await this.slaveTerm();
      if (this.leadership.isLeader) return false;
      if (await this.request(sw, 'slave', gen)) return true;
      await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)).unref());
    }
  }

  /** The newest generation handed out (read from Redis when it answers): never STALE for OVS. */
  private async slaveTerm(): Promise<number> {
    return this.leadership.refreshKnownTerm();
  }

  /** ROLE_REQUEST; true when granted. STALE is handled by onRole (it arrives as a role event). */
  private async request(sw: SwitchSession, role: RoleName, term: number): Promise<boolean> {
    if (sw.state !== 'up') return false;
    try {
      await withTimeout(setRole(sw, role, BigInt(term)), this.roleTimeoutMs);
      return true;
    } catch (err) {
      const level = isStale(err) && role === 'slave' ? 'debug' : 'warn';
      sw.log[level](
        { instance: this.leadership.instanceId, role, term, err: (err as Error).message },
        'role request not granted',
      );
      return false;
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
