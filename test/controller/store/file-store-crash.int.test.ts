import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileStore } from '../../../controller/store/file-store.js';
import { killPid, onExitUndo } from '../../lab/cleanup.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const WRITER = join(import.meta.dirname, 'crash-writer.ts');

/** Runs the writer until it has `acks` acknowledged writes, then kill -9; returns key -> revision. */
async function writeThenKill(
  first: number,
  acks: number,
  snapshotEvery?: number,
): Promise<Map<number, number>> {
  const args = ['--import', 'tsx', WRITER, dir, String(first)];
  if (snapshotEvery) args.push(String(snapshotEvery));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const forget = onExitUndo(() => killPid(child.pid!));
  const acked = new Map<number, number>();
  let buf = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code, sig) => reject(new Error(`writer exited early: ${code ?? sig}`)));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        const [n, rev] = l.split(' ');
        if (rev) acked.set(Number(n), Number(rev));
      }
      if (acked.size >= acks) {
        child.removeAllListeners('exit');
        child.kill('SIGKILL');
        child.once('exit', () => resolve());
      }
    });
  });
  forget();
  return acked;
}

async function checkAll(acked: Map<number, number>): Promise<number> {
  const store = await FileStore.open(dir);
  try {
    const snap = await store.snapshot();
    const byKey = new Map(snap.entries.map((e) => [e.key, e]));
    const missing = [...acked].filter(([n, rev]) => byKey.get(`k${n}`)?.revision !== rev);
    expect(missing).toEqual([]);
    // Nothing but whole writes: every value is the one its key was written with.
    for (const e of snap.entries) expect((e.value as { n: number }).n).toBe(Number(e.key.slice(1)));
    return snap.revision;
  } finally {
    await store.close();
  }
}

describe('embedded store crash safety (kill -9 of a writing process)', () => {
  it('keeps every acknowledged write, across repeated crashes and snapshot rotations', async () => {
    let first = 0;
    let lastRevision = 0;
    for (const [round, snapshotEvery] of [undefined, 500, 137].entries()) {
      const acked = await writeThenKill(first, 1500, snapshotEvery);
      expect(acked.size).toBeGreaterThanOrEqual(1500);
      const revision = await checkAll(acked);
      expect(revision, `round ${round}`).toBeGreaterThanOrEqual(lastRevision + acked.size);
      lastRevision = revision;
      first += 1_000_000;
    }
  }, 120_000);
});
