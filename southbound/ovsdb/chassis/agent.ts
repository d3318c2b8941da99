import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { OvsdbClient } from '../client.js';
import { Replica } from '../replica.js';
import type { DatabaseSchema } from '../schema.js';
import { VSWITCH_COLUMNS, VSWITCH_DB, VSWITCH_TABLES, type VswitchTables } from '../vswitch.js';
import { type BindingEvent, computeBindings, diffBindings, type PortBinding } from './bindings.js';
import { type ChassisDesired, desired as makeDesired } from './desired.js';
import { type EnsureResult, ensureChassis } from './ensure.js';
import { type ChassisFacts, chassisFacts, stateOf, type VswitchState } from './state.js';

export interface ChassisInfo extends ChassisFacts {
  systemId: string;
  /** The OVSDB peer the chassis is reached through. */
  peer: string;
}

type AgentEvents = {
  registered: [info: ChassisInfo];
  binding: [event: BindingEvent, info: ChassisInfo];
  ensured: [result: EnsureResult, info: ChassisInfo];
  error: [err: Error];
};

/**
 * Weft's side of one chassis connection: a replica of its Open_vSwitch database, the chassis
 * identity read from it, the ensure loop (re-run after every change, a no-op when nothing
 * drifted) and the port bindings. Survives reconnects: `attach` each new session.
 */
export class ChassisAgent extends EventEmitter<AgentEvents> {
  readonly replica: Replica<VswitchTables>;
  private client: OvsdbClient | undefined;
  private schema: DatabaseSchema | undefined;
  private info: ChassisInfo | undefined;
  private bindings = new Map<string, PortBinding>();
  private ensuring = false;
  private ensureAgain = false;
  private lastConflicts = '';
  private warnedNoId = false;
  private timer: NodeJS.Timeout | undefined;
  private bindTimer: NodeJS.Timeout | undefined;
  private log: Logger | undefined;
  /**
   * Whether this agent may write to its chassis now (HA: only the leader writes, and only through
   * one connection per chassis). While false, ensure runs plan nothing and send nothing.
   */
  mayWrite: () => boolean = () => true;

  constructor(
    /** Desired state, minus what comes from the chassis itself (encap IP may come from either). */
    private desiredOf: (facts: ChassisInfo) => Partial<ChassisDesired>,
    private readonly logger?: Logger,
    /**
     * Bindings are recomputed this long after a change settles, so that a port re-plugged in one
     * transaction (old interface gone, new one not yet numbered by vswitchd) reads as a move.
     */
    private readonly bindingSettleMs = 150,
  ) {
    super();
    this.log = logger;
    this.replica = new Replica<VswitchTables>({
      db: VSWITCH_DB,
      tables: VSWITCH_TABLES,
      columns: VSWITCH_COLUMNS,
      logger,
    });
    this.replica.on('batch', () => this.onChange());
  }

  get chassis(): ChassisInfo | undefined {
    return this.info;
  }

  /** The OVSDB session currently attached (undefined while reconnecting). */
  get session(): OvsdbClient | undefined {
    return this.client;
  }

  /** The replicated database as pure functions read it, once the schema is known. */
  get state(): VswitchState | undefined {
    return this.schema ? stateOf(this.replica, this.schema) : undefined;
  }

  get currentBindings(): ReadonlyMap<string, PortBinding> {
    return this.bindings;
  }

  /** Starts (or resumes after a reconnect) on `client`; resolves once synced and ensured. */
  async attach(client: OvsdbClient): Promise<void> {
    this.client = client;
    this.info = undefined; // registered (again) once this session shows the system-id
    this.warnedNoId = false;
    this.log = this.logger?.child({ peer: client.peer });
    this.schema = await client.getSchema(VSWITCH_DB);
    await this.replica.attach(client);
    this.refreshIdentity();
    this.refreshBindings();
    await this.ensureNow();
  }

  detach(): void {
    this.client = undefined;
    this.replica.detach();
    if (this.timer) clearTimeout(this.timer);
    if (this.bindTimer) clearTimeout(this.bindTimer);
  }

  /** Runs the ensure logic once now (normally automatic); resolves with what it did. */
  async ensureNow(): Promise<EnsureResult | undefined> {
    const client = this.client;
    if (!client || client.isClosed || !this.info) return undefined;
    if (!this.mayWrite()) {
      // Nothing written, but listeners (the engine's facts) still hear that the chassis changed.
      this.emit('ensured', { transacted: false, changes: [], conflicts: [] }, this.info);
      return undefined;
    }
    if (this.ensuring) {
      this.ensureAgain = true;
      return undefined;
    }
    this.ensuring = true;
    try {
      const d = makeDesired({ encapIp: this.info.encapIp, ...this.desiredOf(this.info) });
      const result = await ensureChassis(client, this.replica, d);
      if (result.transacted) this.log?.info({ changes: result.changes }, 'chassis configured');
      const conflicts = result.conflicts.join('\n');
      if (conflicts !== this.lastConflicts) {
        // Logged when they change, not on every re-check.
        for (const c of result.conflicts) this.log?.warn({ conflict: c }, 'chassis conflict left alone');
        this.lastConflicts = conflicts;
      }
      this.emit('ensured', result, this.info);
      return result;
    } catch (err) {
      this.log?.error({ err: (err as Error).message }, 'chassis ensure failed');
      if (this.listenerCount('error') > 0) this.emit('error', err as Error);
      return undefined;
    } finally {
      this.ensuring = false;
      if (this.ensureAgain) {
        this.ensureAgain = false;
        this.schedule();
      }
    }
  }

  private onChange(): void {
    if (!this.schema) return;
    this.refreshIdentity();
    if (this.bindTimer) clearTimeout(this.bindTimer);
    this.bindTimer = setTimeout(() => this.refreshBindings(), this.bindingSettleMs);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.ensureNow(), 50);
  }

  private refreshIdentity(): void {
    if (!this.schema || !this.client) return;
    const facts = chassisFacts(stateOf(this.replica, this.schema));
    if (!facts.systemId) {
      if (!this.info && !this.warnedNoId)
        this.log?.warn('chassis has no external_ids:system-id yet; waiting for it');
      this.warnedNoId = true;
      return;
    }
    const info: ChassisInfo = { ...facts, systemId: facts.systemId, peer: this.client.peer };
    if (this.info && JSON.stringify(this.info) === JSON.stringify(info)) return;
    this.info = info;
    this.log = (this.logger ?? this.log)?.child({ chassis: info.systemId, peer: info.peer });
    this.log?.info(
      { hostname: info.hostname, encapIp: info.encapIp, datapathTypes: info.datapathTypes },
      'chassis registered',
    );
    this.emit('registered', info);
  }

  private refreshBindings(): void {
    if (!this.schema || !this.info) return;
    const next = computeBindings(stateOf(this.replica, this.schema));
    const events = diffBindings(this.bindings, next);
    this.bindings = next;
    for (const e of events) {
      this.log?.info(
        {
          kind: e.kind,
          ifaceId: e.binding.ifaceId,
          ofport: e.binding.ofport,
          iface: e.binding.interfaceName,
        },
        'port binding',
      );
      this.emit('binding', e, this.info);
    }
  }
}
