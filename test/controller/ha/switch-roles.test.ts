import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Leadership } from '../../../controller/ha/leadership.js';
import { SwitchRoles } from '../../../controller/ha/switch-roles.js';
import type { OfpMessage } from '../../../southbound/openflow/codec/index.js';
import type { RoleChange } from '../../../southbound/openflow/session/events.js';
import { SwitchRegistry } from '../../../southbound/openflow/session/registry.js';
import { OfpErrorReply } from '../../../southbound/openflow/session/session-errors.js';
import type { SwitchSession } from '../../../southbound/openflow/session/switch-session.js';

/**
 * The order of things when leadership moves (the safety of the HA pair rests on it), with
 * in-memory switches that answer ROLE_REQUEST like OVS: refuse an older generation as STALE.
 */
const log = pino({ level: 'silent' });
const ROLE = ['nochange', 'equal', 'master', 'slave'] as const;

class FakeSwitch extends EventEmitter {
  state = 'up';
  log = log;
  role = 'equal';
  peer: string;
  constructor(
    readonly dpid: string,
    private readonly journal: string[],
    public highestGeneration = -1n,
  ) {
    super();
    this.peer = `fake-${dpid}`;
  }
  request(msg: OfpMessage, accept: (r: OfpMessage) => { done: boolean; value?: unknown }): Promise<unknown> {
    if (msg.type !== 'ROLE_REQUEST') throw new Error(`unexpected ${msg.type}`);
    const role = ROLE[msg.role]!;
    this.journal.push(`${this.dpid} ${role} ${msg.generationId}`);
    if (msg.generationId < this.highestGeneration)
      return Promise.reject(
        new OfpErrorReply(11, 0, 'OFPET_ROLE_REQUEST_FAILED', 'OFPRRFC_STALE', msg, Buffer.alloc(0), msg.xid),
      );
    this.highestGeneration = msg.generationId;
    const r = accept({
      type: 'ROLE_REPLY',
      xid: 0,
      role: msg.role,
      generationId: msg.generationId,
    } as OfpMessage);
    return Promise.resolve(r.value);
  }
  noteRole(change: RoleChange) {
    if (change.cause !== 'stale') this.role = change.role;
    this.emit('role', change);
  }
}

class FakeLeadership extends EventEmitter {
  isLeader = false;
  term = 0;
  knownTerm = 0;
  instanceId = 'me';
  stepDowns: string[] = [];
  async refreshKnownTerm() {
    return this.knownTerm;
  }
  lead(term: number) {
    this.isLeader = true;
    this.term = term;
    this.knownTerm = Math.max(this.knownTerm, term);
    this.emit('leader', { term });
  }
  follow(reason: string) {
    const term = this.term;
    this.isLeader = false;
    this.term = 0;
    this.emit('follower', { term, reason });
  }
  stepDown(reason: string) {
    this.stepDowns.push(reason);
    if (this.isLeader) this.follow(reason);
  }
}

function setup() {
  const journal: string[] = [];
  const registry = new SwitchRegistry();
  const leadership = new FakeLeadership();
  const writers = {
    setActive: (a: boolean) => journal.push(`engine ${a ? 'active' : 'standby'}`),
    attach: (sw: SwitchSession) => journal.push(`attach ${sw.dpid}`),
    detach: (sw: SwitchSession) => journal.push(`detach ${sw.dpid}`),
  };
  new SwitchRoles(registry, leadership as unknown as Leadership, writers, log);
  const connect = (dpid: string, highest = -1n) => {
    const sw = new FakeSwitch(dpid, journal, highest);
    // The registry wants a session past its handshake; the fake has what it reads.
    registry.add(sw as unknown as SwitchSession);
    return sw;
  };
  return { journal, registry, leadership, connect };
}
const settle = () => new Promise((r) => setTimeout(r, 10));

describe('SwitchRoles', () => {
  it('starts as standby: engine inactive, SLAVE with the newest known term, then attach', async () => {
    const { journal, leadership, connect } = setup();
    leadership.knownTerm = 41;
    connect('s1');
    await settle();
    expect(journal).toEqual(['engine standby', 's1 slave 41', 'attach s1']);
  });

  it('a standby whose SLAVE is refused as STALE (term not known yet) retries with the term re-read', async () => {
    const { journal, leadership, connect } = setup();
    leadership.knownTerm = 0; // Redis not answering yet
    const sw = connect('s1', 50n); // the switch saw the leader's generation 50
    await settle();
    expect(journal).toContain('s1 slave 0');
    expect(journal).not.toContain('attach s1');
    leadership.knownTerm = 50; // Redis answers
    await new Promise((r) => setTimeout(r, 400));
    expect(journal).toContain('s1 slave 50');
    expect(journal.at(-1)).toBe('attach s1');
    expect(sw.highestGeneration).toBe(50n);
  });

  it('becoming leader: MASTER with the term on every switch before the engine writes', async () => {
    const { journal, leadership, connect } = setup();
    connect('s1');
    connect('s2');
    await settle();
    journal.length = 0;
    leadership.lead(42);
    await settle();
    expect(journal.slice(0, 2).sort()).toEqual(['s1 master 42', 's2 master 42']);
    expect(journal[2]).toBe('engine active');
    // A switch connecting while we lead: MASTER, then attach.
    journal.length = 0;
    connect('s3');
    await settle();
    expect(journal).toEqual(['s3 master 42', 'attach s3']);
  });

  it('stepping down: the engine stops writing FIRST, then SLAVE', async () => {
    const { journal, leadership, connect } = setup();
    connect('s1');
    leadership.lead(42);
    await settle();
    journal.length = 0;
    leadership.follow('lease lost');
    await settle();
    expect(journal).toEqual(['engine standby', 's1 slave 42']);
  });

  it('steps down when a switch demotes us for a newer generation, not for an older one', async () => {
    const { leadership, connect } = setup();
    const sw = connect('s1');
    leadership.lead(42);
    await settle();
    sw.noteRole({ role: 'slave', generationId: 41n, cause: 'role-status' });
    expect(leadership.stepDowns).toEqual([]);
    sw.noteRole({ role: 'slave', generationId: 43n, cause: 'role-status' });
    expect(leadership.stepDowns).toHaveLength(1);
    expect(leadership.isLeader).toBe(false);
  });

  it('steps down when a switch answers our MASTER with STALE, and never activates the engine', async () => {
    const { journal, leadership, connect } = setup();
    connect('s1', 50n); // this switch has seen generation 50 from someone else
    await settle();
    journal.length = 0;
    leadership.lead(42);
    await settle();
    expect(leadership.stepDowns).toHaveLength(1);
    expect(journal).not.toContain('engine active');
    expect(journal[0]).toBe('s1 master 42');
  });
});
