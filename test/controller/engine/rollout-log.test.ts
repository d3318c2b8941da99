import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { SyncResult } from '../../../controller/engine/datapath-sync.js';
import { RolloutLog } from '../../../controller/engine/rollout-log.js';

/** Log lines as objects, written synchronously (pino calls write() per line). */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { log: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }), lines };
}

const result = (revision: number, over: Partial<SyncResult> = {}): SyncResult => ({
  revision,
  flowsAdded: 2,
  flowsModified: 0,
  flowsRemoved: 1,
  groupsChanged: 0,
  dumped: false,
  durationMs: 3,
  dumpMs: 0,
  diffMs: 0.1,
  applyMs: 2.9,
  ...over,
});

// pino writes through a stream: let it flush.
const settle = () => new Promise((r) => setImmediate(r));

describe('RolloutLog', () => {
  it('writes one line per revision, once every switch it was sent to applied it', async () => {
    const { log, lines } = capture();
    const r = new RolloutLog(log);
    r.begin(7, ['a', 'b', 'c']);
    r.applied('a', result(7));
    r.applied('b', result(7, { durationMs: 9 }));
    await settle();
    expect(lines).toHaveLength(0);
    r.applied('c', result(7, { groupsChanged: 1 }));
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      msg: 'revision applied',
      revision: 7,
      datapaths: 3,
      flowsAdded: 6,
      flowsRemoved: 3,
      groupsChanged: 1,
      slowestDpid: 'b',
      slowestMs: 9,
    });
    expect(lines[0]).not.toHaveProperty('detached');
  });

  it('tells its listener (metrics) how long each revision took to reach every switch', async () => {
    const { log } = capture();
    const done: Array<{ revision: number; datapaths: number; ms: number }> = [];
    const r = new RolloutLog(log, (d) => done.push(d));
    r.begin(2, ['a', 'b']);
    await new Promise((res) => setTimeout(res, 15));
    r.applied('a', result(2));
    expect(done).toEqual([]);
    r.forget('b');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ revision: 2, datapaths: 1 });
    expect(done[0]!.ms).toBeGreaterThanOrEqual(10);
  });

  it('completes merged revisions together, counting the changes once, in the newest', async () => {
    const { log, lines } = capture();
    const r = new RolloutLog(log);
    r.begin(4, ['a']);
    r.begin(5, ['a']);
    r.applied('a', result(5)); // the sync merged revision 4 into 5
    await settle();
    expect(lines.map((l) => [l.revision, l.flowsAdded])).toEqual([
      [4, 0],
      [5, 2],
    ]);
  });

  it('an older revision applied does not complete a newer one', async () => {
    const { log, lines } = capture();
    const r = new RolloutLog(log);
    r.begin(4, ['a']);
    r.begin(5, ['a']);
    r.applied('a', result(4));
    await settle();
    expect(lines.map((l) => l.revision)).toEqual([4]);
  });

  it('a switch that went away no longer holds a revision open, and is counted as detached', async () => {
    const { log, lines } = capture();
    const r = new RolloutLog(log);
    r.begin(9, ['a', 'b']);
    r.applied('a', result(9));
    r.forget('b');
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ revision: 9, datapaths: 1, detached: 1 });
  });

  it('a second send of the same revision joins its rollout; standby drops everything silently', async () => {
    const { log, lines } = capture();
    const r = new RolloutLog(log);
    r.begin(3, ['a']);
    r.begin(3, ['a', 'b']);
    r.applied('a', result(3));
    await settle();
    expect(lines).toHaveLength(0);
    r.applied('b', result(3));
    await settle();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ revision: 3, datapaths: 2 });
    r.begin(10, ['a']);
    r.clear();
    r.applied('a', result(10));
    await settle();
    expect(lines).toHaveLength(1);
  });

  it('keeps a bounded number of revisions open for a switch that never answers', async () => {
    const { log, lines } = capture();
    const r = new RolloutLog(log);
    for (let rev = 1; rev <= 1000; rev++) r.begin(rev, ['stuck']);
    r.applied('stuck', result(1000));
    await settle();
    expect(lines.length).toBe(256);
    expect(lines.at(-1)).toMatchObject({ revision: 1000 });
    expect(lines[0]).toMatchObject({ revision: 745 });
  });
});
