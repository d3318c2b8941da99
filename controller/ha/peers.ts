import type { Redis } from 'ioredis';

/**
 * What each instance publishes in Redis for its peer (hash PREFIXha:instances, field = instance
 * id): the addresses hypervisors can reach it at. The leader turns them into every hypervisor's
 * controller targets and managers. Entries are not expired: a dead instance stays a target, so
 * switches find it again when it returns. Decommission one with `HDEL PREFIXha:instances ID`.
 *
 * The leader also publishes the revision its switches have all applied (PREFIXha:applied), which
 * `?wait=applied` on the standby waits for.
 */
export interface InstanceAddresses {
  instanceId: string;
  /** OpenFlow target switches dial, e.g. tcp:192.0.2.1:6653. */
  openflow?: string;
  /** OVSDB manager target hypervisors dial, e.g. tcp:192.0.2.1:6640. */
  ovsdb?: string;
}

const TARGET = /^(tcp|ssl):(\[[0-9a-fA-F:.]+\]|[^:\s]+):\d{1,5}$|^unix:\S+$/;

/** Throws naming the flag when an advertised address is not an OVS active target. */
export function checkTarget(flag: string, value: string): string {
  if (!TARGET.test(value))
    throw new Error(`${flag}: '${value}' is not tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH`);
  const port = /:(\d+)$/.exec(value);
  if (!value.startsWith('unix:') && port && Number(port[1]) > 65535)
    throw new Error(`${flag}: '${value}': port over 65535`);
  return value;
}

export class PeerDirectory {
  private readonly instancesKey: string;
  private readonly appliedKey: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.instancesKey = `${prefix}ha:instances`;
    this.appliedKey = `${prefix}ha:applied`;
  }

  async publish(self: InstanceAddresses): Promise<void> {
    await this.redis.hset(this.instancesKey, self.instanceId, JSON.stringify(self));
  }

  /** Every published instance, sorted by id (a stable order keeps OVSDB plans empty). */
  async list(): Promise<InstanceAddresses[]> {
    const all = await this.redis.hgetall(this.instancesKey);
    const out: InstanceAddresses[] = [];
    for (const [id, json] of Object.entries(all)) {
      try {
        const v = JSON.parse(json) as Partial<InstanceAddresses>;
        out.push({
          instanceId: id,
          ...(typeof v.openflow === 'string' ? { openflow: v.openflow } : {}),
          ...(typeof v.ovsdb === 'string' ? { ovsdb: v.ovsdb } : {}),
        });
      } catch {
        // a hand-edited entry; ignored
      }
    }
    return out.sort((a, b) => a.instanceId.localeCompare(b.instanceId));
  }

  /** Leader: every switch has applied `revision` (term-stamped; never moves backwards within a term). */
  async publishApplied(revision: number, term: number): Promise<void> {
    await this.redis.eval(
      `local cur = redis.call('HMGET', KEYS[1], 'revision', 'term')
       local r, t = tonumber(cur[1] or '0'), tonumber(cur[2] or '0')
       local nr, nt = tonumber(ARGV[1]), tonumber(ARGV[2])
       if nt > t or (nt == t and nr > r) then redis.call('HSET', KEYS[1], 'revision', nr, 'term', nt) end
       return 1`,
      1,
      this.appliedKey,
      revision,
      term,
    );
  }

  /** The revision the leader last said its switches applied (0 if none). */
  async applied(): Promise<number> {
    return Number((await this.redis.hget(this.appliedKey, 'revision')) ?? 0);
  }
}
