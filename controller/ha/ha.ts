import type { Logger } from 'pino';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { ChassisDesired } from '../../southbound/ovsdb/chassis/desired.js';
import type { ChassisManager } from '../../southbound/ovsdb/chassis/manager.js';
import type { ApplyTracker } from '../intent/service.js';
import { parseRedisUrl } from '../store/redis-url.js';
import { Leadership } from './leadership.js';
import { RedisLease } from './lease.js';
import { type InstanceAddresses, PeerDirectory } from './peers.js';
import { type HaWriters, SwitchRoles } from './switch-roles.js';

export type HaMode = 'roles' | 'vip';

export interface HaConfig {
  mode: HaMode;
  instanceId: string;
  leaseTtlMs: number;
  /** OpenFlow target switches can dial to reach this instance (roles mode). */
  advertiseOpenflow?: string;
  /** OVSDB manager target hypervisors can dial to reach this instance. */
  advertiseOvsdb?: string;
}

export interface HaStatus {
  mode: HaMode;
  instanceId: string;
  role: 'leader' | 'standby' | 'unknown';
  /** Our term while leading, else 0. */
  term: number;
  leaderId?: string;
  leaderTerm?: number;
  redisReachable: boolean;
}

export interface HaDeps {
  config: HaConfig;
  /** The store's redis:// URL: the lease uses the same server and key prefix. */
  storeUrl: string;
  switches: SwitchRegistry;
  /** The engine's HA surface plus switch attach/detach (main.ts owns how a session becomes a port). */
  writers: HaWriters;
  /** The engine, for `?wait=applied` on the leader. */
  engine: ApplyTracker;
  /** The intent revision this instance has. */
  revision: () => number;
  chassis?: ChassisManager;
  log: Logger;
  /** Controller max_backoff set on every hypervisor (ms, >= 1000). */
  maxBackoffMs?: number;
}

/** The HA pair, as one instance runs it: lease, leadership, switch roles, peers, applied revision. */
export class HaNode implements ApplyTracker {
  readonly leadership: Leadership;
  private readonly lease: RedisLease;
  private readonly peers: PeerDirectory;
  private readonly log: Logger;
  private targetsTimer?: NodeJS.Timeout;
  private lastTargets = '';
  private publishing = false;
  private publishAgain = false;

  constructor(private readonly deps: HaDeps) {
    const { config } = deps;
    const redisCfg = parseRedisUrl(deps.storeUrl);
    this.log = deps.log.child({ instance: config.instanceId });
    this.lease = new RedisLease({
      redis: redisCfg.redis,
      prefix: redisCfg.prefix,
      instanceId: config.instanceId,
      ttlMs: config.leaseTtlMs,
    });
    this.peers = new PeerDirectory(this.lease.connection, redisCfg.prefix);
    this.leadership = new Leadership(this.lease, this.log);
    new SwitchRoles(deps.switches, this.leadership, deps.writers, this.log);
    deps.chassis?.setWriting(false);
    // Writing to hypervisors starts only once the pair's targets are read: a leader writing with
    // the defaults would remove the other instance's controller and manager.
    this.leadership.on('leader', () => {
      void this.refreshTargets();
      this.notePossiblyApplied();
    });
    this.leadership.on('follower', () => deps.chassis?.setWriting(false));
  }

  start(): void {
    this.leadership.start();
    // Both instances keep the targets current (peers may join or change addresses; one HGETALL),
    // so a new leader writes the right ones at once; the leader also republishes what is applied.
    void this.refreshTargets();
    this.targetsTimer = setInterval(
      () => {
        void this.refreshTargets();
        this.notePossiblyApplied();
      },
      Math.min(2000, Math.max(500, this.deps.config.leaseTtlMs)),
    );
    this.targetsTimer.unref();
  }

  status(): HaStatus {
    const s = this.leadership.state();
    const role = s.role === 'leader' ? 'leader' : s.redisReachable || s.leader ? 'standby' : 'unknown';
    return {
      mode: this.deps.config.mode,
      instanceId: s.instanceId,
      role,
      term: s.term,
      ...(s.leader ? { leaderId: s.leader.instanceId, leaderTerm: s.leader.term } : {}),
      redisReachable: s.redisReachable,
    };
  }

  /**
   * ApplyTracker. The leader: the engine's own answer. The standby cannot see switches apply:
   * it waits for the revision the leader publishes in Redis once all its switches have it.
   */
  async waitApplied(revision: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      if (this.leadership.isLeader) return this.deps.engine.waitApplied(revision, Math.max(0, left));
      const applied = await this.peers.applied().catch(() => 0);
      if (applied >= revision) return true;
      if (left <= 0) return false;
      await new Promise((r) => setTimeout(r, Math.min(100, left)));
    }
  }

  /** Called after switch syncs: the leader publishes the revision every switch now has. */
  notePossiblyApplied(): void {
    if (!this.leadership.isLeader) return;
    if (this.publishing) {
      this.publishAgain = true;
      return;
    }
    this.publishing = true;
    void (async () => {
      try {
        do {
          this.publishAgain = false;
          const revision = this.deps.revision();
          const term = this.leadership.term;
          if (term && (await this.deps.engine.waitApplied(revision, 0)))
            await this.peers.publishApplied(revision, term).catch(() => undefined);
        } while (this.publishAgain && this.leadership.isLeader);
      } finally {
        this.publishing = false;
      }
    })();
  }

  async stop(): Promise<void> {
    clearInterval(this.targetsTimer);
    await this.leadership.stop();
    this.lease.close();
  }

  private async publishSelf(): Promise<void> {
    const { instanceId, advertiseOpenflow, advertiseOvsdb } = this.deps.config;
    const self: InstanceAddresses = {
      instanceId,
      ...(advertiseOpenflow ? { openflow: advertiseOpenflow } : {}),
      ...(advertiseOvsdb ? { ovsdb: advertiseOvsdb } : {}),
    };
    await this.peers
      .publish(self)
      .catch((err: Error) =>
        this.log.debug({ err: err.message }, 'could not publish instance addresses (Redis unreachable?)'),
      );
  }

  /**
   * Every hypervisor lists every instance as controller (roles mode) and manager. Both instances
   * keep the settings current; only the leader's chassis manager writes them, and it starts
   * writing once they have been read at least once.
   */
  private async refreshTargets(): Promise<void> {
    const chassis = this.deps.chassis;
    await this.publishSelf();
    if (!chassis) return;
    let peers: InstanceAddresses[];
    try {
      peers = await this.peers.list();
    } catch {
      return; // Redis away: targets stay as they are
    }
    const settings = targetsFor(this.deps.config.mode, peers, this.deps.maxBackoffMs ?? 1000);
    const text = JSON.stringify(settings);
    if (text !== this.lastTargets) {
      this.lastTargets = text;
      this.log.info(
        { controllers: settings.controllers?.map((c) => c.target), managers: settings.managers },
        'hypervisor targets for the HA pair',
      );
      chassis.setShared(settings);
    }
    if (this.leadership.isLeader && !chassis.isWriting) chassis.setWriting(true);
  }
}

/**
 * Pure: what every chassis gets from the published instances. Roles mode lists each instance's
 * OpenFlow address as a controller and only then replaces the bridge's other controllers (when
 * every instance has advertised one; otherwise the bridge's controllers are left as typed). Both
 * modes list each instance's OVSDB address as a manager and keep controller reconnects short.
 */
export function targetsFor(
  mode: HaMode,
  peers: InstanceAddresses[],
  maxBackoffMs: number,
): Partial<ChassisDesired> {
  const openflow = peers.map((p) => p.openflow);
  const allOpenflow = mode === 'roles' && openflow.length > 0 && openflow.every((t) => t !== undefined);
  return {
    controllers: allOpenflow ? [...new Set(openflow as string[])].map((target) => ({ target })) : [],
    exclusiveControllers: allOpenflow,
    tuneAllControllers: true,
    managers: [...new Set(peers.flatMap((p) => (p.ovsdb ? [p.ovsdb] : [])))],
    maxBackoffMs,
  };
}
