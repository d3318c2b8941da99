import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { OvsdbClient } from '../client.js';
import { OvsdbSession } from '../session.js';
import { type Listener, listen, type TlsFiles } from '../transport.js';
import { ChassisAgent, type ChassisInfo } from './agent.js';
import type { BindingEvent } from './bindings.js';
import type { ChassisDesired } from './desired.js';
import type { EnsureResult } from './ensure.js';

export interface ChassisManagerOptions {
  /** Passive targets hypervisors dial (`ovs-vsctl set-manager tcp:CONTROLLER:6640`). */
  listen?: string[];
  /** Active targets weft dials (`tcp:HOST:6640`, `unix:PATH`, `ssl:HOST:6640`). */
  connect?: string[];
  tls?: TlsFiles;
  /** Desired state shared by every chassis (bridge, controllers, profile, ...). */
  desired?: Partial<ChassisDesired>;
  /** Inactivity probe for every OVSDB session (ms; 0 = off). */
  probeIntervalMs?: number;
  logger?: Logger;
}

export interface ChassisBindingEvent {
  systemId: string;
  event: BindingEvent;
}

type ManagerEvents = {
  /** A chassis connected (or its facts changed): system-id, hostname, encap IP, datapath types. */
  chassis: [info: ChassisInfo];
  chassisDown: [info: ChassisInfo];
  binding: [e: ChassisBindingEvent];
  /** An iface-id bound on one chassis while bound on another: a live migration. */
  migration: [e: { ifaceId: string; from: string; to: string }];
  ensured: [info: ChassisInfo, result: EnsureResult];
};

/**
 * Runs chassis management for every hypervisor, whichever side opened the OVSDB connection:
 * registers the chassis, keeps its integration bridge as desired, and reports port bindings.
 * Per-chassis settings (e.g. an encap IP from the API) override the shared ones.
 */
export class ChassisManager extends EventEmitter<ManagerEvents> {
  private readonly servers: Listener[] = [];
  private readonly sessions: OvsdbSession[] = [];
  private readonly agents = new Set<ChassisAgent>();
  private readonly perChassis = new Map<string, Partial<ChassisDesired>>();
  /** iface-id -> system-id where it is bound. */
  private readonly boundOn = new Map<string, string>();
  private readonly log: Logger | undefined;
  private writing = true;

  constructor(private readonly opts: ChassisManagerOptions = {}) {
    super();
    this.log = opts.logger?.child({ component: 'chassis-manager' });
  }

  /**
   * HA: only the leader writes to hypervisors' databases. A manager that does not write still
   * replicates every chassis (the standby's facts stay current); turning writing on ensures every
   * chassis at once.
   */
  setWriting(writing: boolean): void {
    if (this.writing === writing) return;
    this.writing = writing;
    this.log?.info({ writing }, writing ? 'configuring chassis' : 'not configuring chassis (standby)');
    if (writing) this.ensureAll();
  }

  get isWriting(): boolean {
    return this.writing;
  }

  /** Changes settings shared by every chassis (e.g. HA controller and manager targets) and applies them. */
  setShared(settings: Partial<ChassisDesired>): void {
    this.opts.desired = { ...this.opts.desired, ...settings };
    this.ensureAll();
  }

  private ensureAll(): void {
    for (const a of this.agents) void a.ensureNow();
  }

  async start(): Promise<void> {
    for (const target of this.opts.listen ?? []) {
      const l = await listen(target, (stream, peer) => this.accept(stream, peer), { tls: this.opts.tls });
      this.log?.info({ listen: l.address }, 'waiting for hypervisor OVSDB connections');
      this.servers.push(l);
    }
    for (const target of this.opts.connect ?? []) this.dial(target);
  }

  async stop(): Promise<void> {
    for (const s of this.sessions) s.stop();
    for (const a of this.agents) a.detach();
    await Promise.all(this.servers.map((l) => l.close()));
    this.sessions.length = 0;
    this.servers.length = 0;
  }

  /** Listening addresses (with real ports), for tests and logs. */
  get addresses(): string[] {
    return this.servers.map((l) => l.address);
  }

  /** Known, connected chassis. */
  chassis(): ChassisInfo[] {
    return [...this.agents].flatMap((a) => (a.chassis && a.session ? [a.chassis] : []));
  }

  /** The chassis that last bound this iface-id (a VM mid-migration is on the newer one). */
  chassisOfIface(ifaceId: string): string | undefined {
    return this.boundOn.get(ifaceId);
  }

  agentOf(systemId: string): ChassisAgent | undefined {
    return [...this.agents].find((a) => a.session && a.chassis?.systemId === systemId);
  }

  /** Pre-provisions or overrides settings of one chassis (e.g. its encap IP from the API). */
  async provision(systemId: string, settings: Partial<ChassisDesired>): Promise<void> {
    this.perChassis.set(systemId, { ...this.perChassis.get(systemId), ...settings });
    await this.agentOf(systemId)?.ensureNow();
  }

  private desiredFor = (info: ChassisInfo): Partial<ChassisDesired> => ({
    ...this.opts.desired,
    ...(info.encapIp ? { encapIp: info.encapIp } : {}),
    ...this.perChassis.get(info.systemId),
  });

  private newAgent(): ChassisAgent {
    const agent = new ChassisAgent(this.desiredFor, this.opts.logger);
    // One writer per chassis: a hypervisor connected twice (its VIP manager and a direct one)
    // is configured through the first connection only, so two plans never race.
    agent.mayWrite = () => this.writing && (!agent.chassis || this.agentOf(agent.chassis.systemId) === agent);
    agent.on('registered', (info) => this.emit('chassis', info));
    agent.on('ensured', (result, info) => this.emit('ensured', info, result));
    agent.on('error', () => undefined); // logged by the agent; a chassis fault stays local
    agent.on('binding', (event, info) => this.onBinding(event, info));
    this.agents.add(agent);
    return agent;
  }

  private accept(stream: Duplex, peer: string): void {
    const client = new OvsdbClient(stream, {
      peer,
      logger: this.opts.logger,
      probeIntervalMs: this.opts.probeIntervalMs,
    });
    const agent = this.newAgent();
    this.log?.info({ peer }, 'hypervisor connected');
    client.once('close', (err) => this.lost(agent, peer, err));
    agent.attach(client).catch((err: Error) => {
      this.log?.warn({ peer, err: err.message }, 'closing hypervisor connection: sync failed');
      client.close();
    });
  }

  private dial(target: string): void {
    const session = new OvsdbSession(target, {
      tls: this.opts.tls,
      logger: this.opts.logger,
      probeIntervalMs: this.opts.probeIntervalMs,
    });
    const agent = this.newAgent();
    session.on('connected', (client) => {
      agent.attach(client).catch((err: Error) => {
        this.log?.warn({ peer: client.peer, err: err.message }, 'resync failed; reconnecting');
        client.close();
      });
    });
    session.on('disconnected', (err) => {
      agent.detach();
      const info = agent.chassis;
      if (!info) return;
      // The agent (its replica and bindings) lives on to resync; the chassis is down meanwhile.
      this.log?.warn({ chassis: info.systemId, err: err?.message }, 'chassis unreachable');
      this.emit('chassisDown', info);
    });
    this.sessions.push(session);
    session.start();
  }

  private lost(agent: ChassisAgent, peer: string, err: Error | undefined): void {
    agent.detach();
    this.agents.delete(agent);
    const info = agent.chassis;
    this.log?.info({ peer, chassis: info?.systemId, err: err?.message }, 'hypervisor disconnected');
    if (info) {
      for (const [ifaceId, sys] of this.boundOn) if (sys === info.systemId) this.boundOn.delete(ifaceId);
      this.emit('chassisDown', info);
      // If the chassis is still connected another way, that connection now does the writing.
      this.ensureAll();
    }
  }

  private onBinding(event: BindingEvent, info: ChassisInfo): void {
    const id = event.binding.ifaceId;
    if (event.kind === 'unbind') {
      if (this.boundOn.get(id) === info.systemId) this.boundOn.delete(id);
    } else {
      const was = this.boundOn.get(id);
      if (was && was !== info.systemId) this.emit('migration', { ifaceId: id, from: was, to: info.systemId });
      this.boundOn.set(id, info.systemId);
    }
    this.emit('binding', { systemId: info.systemId, event });
  }
}
