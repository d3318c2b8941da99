import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { decodeRecords, encodeRecord } from './framing.js';
import { type Change, type Entry, StoreError } from './store.js';

/**
 * On-disk layout of the embedded store (one directory):
 *   snapshot-<rev>.snap   every key at <rev>, one framed JSON record, written to a temp file,
 *                         fsync'd, then renamed into place (so it is whole or absent)
 *   journal-<rev>.log     framed JSON records, each a group of changes; the file's first change
 *                         has revision <rev>. Appended and fdatasync'd before any ack.
 *   lock                  pid of the process that has the directory open
 * Loading takes the newest snapshot, then replays every journal record after it, in order.
 */

const pad = (n: number) => String(n).padStart(12, '0');
export const journalName = (startRev: number) => `journal-${pad(startRev)}.log`;
export const snapshotName = (rev: number) => `snapshot-${pad(rev)}.snap`;
const revOf = (name: string, prefix: string, suffix: string) =>
  name.startsWith(prefix) && name.endsWith(suffix)
    ? Number(name.slice(prefix.length, -suffix.length))
    : Number.NaN;

export interface Loaded {
  data: Map<string, Entry>;
  revision: number;
  /** Changes replayed from the journals (after the snapshot), oldest first. */
  changes: Change[];
  /** The journal to keep appending to, and its first revision. */
  journalStart: number;
}

/** Group-commit payload: the changes of one fsync. */
export interface JournalRecord {
  changes: Change[];
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Refuses a directory another live process has open (two writers would interleave journals). */
export async function takeLock(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'lock');
  try {
    const other = Number((await readFile(path, 'utf8')).trim());
    if (other && other !== process.pid && alive(other)) {
      throw new StoreError('unavailable', `store directory ${dir} is in use by process ${other}`);
    }
  } catch (err) {
    if (err instanceof StoreError) throw err;
  }
  await writeFile(path, `${process.pid}\n`);
  return () => rm(path, { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function load(dir: string, log: Logger): Promise<Loaded> {
  const names = await readdir(dir);
  const snapshots = names
    .map((n) => revOf(n, 'snapshot-', '.snap'))
    .filter(Number.isFinite)
    .sort((a, b) => b - a);
  const data = new Map<string, Entry>();
  let revision = 0;
  for (const rev of snapshots) {
    const buf = await readFile(join(dir, snapshotName(rev)));
    const { records } = decodeRecords(buf);
    if (records.length !== 1) {
      log.warn({ dir, snapshot: rev }, 'ignoring damaged snapshot');
      continue;
    }
    const snap = parseJson(records[0]!, `${dir}/${snapshotName(rev)}`) as {
      revision: number;
      entries: Entry[];
    };
    for (const e of snap.entries) data.set(e.key, e);
    revision = snap.revision;
    break;
  }
  const journals = names
    .map((n) => revOf(n, 'journal-', '.log'))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const changes: Change[] = [];
  for (const [i, start] of journals.entries()) {
    const path = join(dir, journalName(start));
    const buf = await readFile(path);
    const decoded = decodeRecords(buf);
    if (decoded.validLength < buf.length) {
      // A torn tail is the normal result of a crash mid-write: those writes were never acked.
      const dropped = buf.length - decoded.validLength;
      if (i !== journals.length - 1) {
        log.warn(
          { dir, journal: start, dropped, reason: decoded.stopReason },
          'damaged record inside an older journal',
        );
      } else
        log.warn({ dir, journal: start, dropped, reason: decoded.stopReason }, 'dropping torn journal tail');
      await truncate(path, decoded.validLength);
    }
    for (const payload of decoded.records) {
      const rec = parseJson(payload, `${dir}/${journalName(start)}`) as JournalRecord;
      for (const change of rec.changes) {
        if (change.revision <= revision) continue;
        if (change.revision !== revision + 1) {
          throw new StoreError(
            'corrupt',
            `store ${dir}: journal ${journalName(start)} jumps from revision ${revision} to ${change.revision}`,
          );
        }
        applyChange(data, change);
        revision = change.revision;
        changes.push(change);
      }
    }
  }
  const journalStart = journals.length > 0 ? journals[journals.length - 1]! : revision + 1;
  return { data, revision, changes, journalStart };
}

/** A record that passed its crc but is not our JSON was written by something else: stop loudly. */
function parseJson(payload: Buffer, where: string): unknown {
  try {
    return JSON.parse(payload.toString('utf8'));
  } catch (err) {
    throw new StoreError(
      'corrupt',
      `${where}: a record with a valid checksum is not JSON (${(err as Error).message})`,
    );
  }
}

export function applyChange(data: Map<string, Entry>, change: Change): void {
  for (const op of change.ops) {
    if (op.type === 'put') data.set(op.key, { key: op.key, value: op.value, revision: change.revision });
    else data.delete(op.key);
  }
}

export async function openJournal(dir: string, startRev: number): Promise<FileHandle> {
  const fh = await open(join(dir, journalName(startRev)), 'a');
  await fsyncDir(dir);
  return fh;
}

/** Writes a snapshot at `revision`, then removes the snapshots and journals it makes redundant. */
export async function writeSnapshot(dir: string, revision: number, entries: Entry[], currentJournal: number) {
  const payload = Buffer.from(JSON.stringify({ revision, entries }), 'utf8');
  const tmp = join(dir, `${snapshotName(revision)}.tmp`);
  const fh = await open(tmp, 'w');
  try {
    await fh.write(encodeRecord(payload));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, join(dir, snapshotName(revision)));
  await fsyncDir(dir);
  for (const name of await readdir(dir)) {
    const snap = revOf(name, 'snapshot-', '.snap');
    const journal = revOf(name, 'journal-', '.log');
    if (
      snap < revision ||
      journal < currentJournal ||
      (name.endsWith('.tmp') && name !== `${snapshotName(revision)}.tmp`)
    ) {
      await rm(join(dir, name), { force: true });
    }
  }
}
