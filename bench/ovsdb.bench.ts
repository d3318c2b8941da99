/**
 * OVSDB benchmark (npm run bench:ovsdb): a real ovsdb-server 3.1 holding 10,000 interfaces.
 * 1. initial monitor of the whole Open_vSwitch database into weft's typed replica (target <= 1 s),
 *    beside `ovs-vsctl list interface` reading the same rows;
 * 2. 1,000 single-row transactions pipelined on one session (target <= 1 s), beside ovs-vsctl
 *    doing the same 1,000 changes in one call and, sampled, one call per change.
 */
import net from 'node:net';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { OvsdbClient } from '../southbound/ovsdb/client.js';
import { JsonStreamSplitter } from '../southbound/ovsdb/framing.js';
import { Replica } from '../southbound/ovsdb/replica.js';
import {
  VSWITCH_COLUMNS,
  VSWITCH_DB,
  VSWITCH_TABLES,
  type VswitchTables,
} from '../southbound/ovsdb/vswitch.js';
import { run } from '../test/lab/exec.js';
import { startOvs } from '../test/lab/ovs.js';

const INTERFACES = 10_000;
const TXNS = 1_000;
// Each ovs-vsctl call reads the whole 10k-row database first, so only a few are sampled.
const SEQUENTIAL_SAMPLE = 5;

let lastCpuMs = 0;
/** Wall time of `fn`; `lastCpuMs` gets this process's CPU time over the same span. */
const time = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await fn();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  lastCpuMs = (c.user + c.system) / 1000;
  return [wall, r];
};
/** Server-side cost alone: a raw socket asks for the same monitor and times first/last byte. */
async function serverTiming(
  socketPath: string,
  requests: object,
): Promise<{ firstByteMs: number; bytes: number }> {
  const sock = net.connect(socketPath);
  await new Promise((r) => sock.once('connect', r));
  const splitter = new JsonStreamSplitter(512 * 1024 * 1024);
  const t0 = performance.now();
  let first = 0;
  let bytes = 0;
  await new Promise<void>((resolve) => {
    sock.on('data', (d: Buffer) => {
      first ||= performance.now();
      bytes += d.length;
      if (splitter.push(d).length > 0) resolve();
    });
    const params = [VSWITCH_DB, 'bench', requests, '00000000-0000-0000-0000-000000000000'];
    sock.write(JSON.stringify({ method: 'monitor_cond_since', params, id: 1 }));
  });
  sock.destroy();
  return { firstByteMs: first - t0, bytes };
}

const ms = (x: number) => `${x.toFixed(0).padStart(7)} ms`;

async function main(): Promise<void> {
  const ovs = await startOvs({ vswitchd: false });
  try {
    const vsctl = (...args: string[]) =>
      run('ovs-vsctl', [`--db=${ovs.dbTarget}`, '--no-wait', '--timeout=120', ...args]);
    await vsctl('add-br', 'br-bench', '--', 'set', 'bridge', 'br-bench', 'datapath_type=netdev');

    // Populate with our own client: 5 transactions of 2,000 ports each.
    const loader = await OvsdbClient.connect(ovs.dbTarget);
    const [populateMs] = await time(async () => {
      for (let base = 0; base < INTERFACES; base += 2000) {
        const txn = await loader.transaction<VswitchTables>(VSWITCH_DB);
        const ports: string[] = [];
        for (let i = base; i < base + 2000; i++) {
          txn.insert(
            'Interface',
            { name: `p${i}`, type: 'internal', external_ids: { 'iface-id': `vm-${i}` } },
            `i${i}`,
          );
          txn.insert('Port', { name: `p${i}`, interfaces: [`i${i}`] }, `p${i}`);
          ports.push(`p${i}`);
        }
        txn.mutate('Bridge', [['name', '==', 'br-bench']], [['ports', 'insert', ports]]);
        await loader.run(txn, { timeoutMs: 120_000 });
      }
    });
    loader.close();

    // 1. Initial monitor into the replica vs ovs-vsctl list interface.
    const [vsctlListMs, listed] = await time(() => vsctl('list', 'interface'));
    const vsctlRows = listed.split('\n\n').filter((b) => b.includes('_uuid')).length;
    const client = await OvsdbClient.connect(ovs.dbTarget, { maxMessageBytes: 256 * 1024 * 1024 });
    // Every column of every table (all but statistics), as `ovs-vsctl list` reads them ...
    const full = new Replica<VswitchTables>({ db: VSWITCH_DB, tables: VSWITCH_TABLES });
    const [fullMs] = await time(() => full.attach(client));
    const fullCpuMs = lastCpuMs;
    full.detach();
    // ... and the typed columns weft's chassis management replicates (VSWITCH_COLUMNS).
    const replica = new Replica<VswitchTables>({
      db: VSWITCH_DB,
      tables: VSWITCH_TABLES,
      columns: VSWITCH_COLUMNS,
    });
    const [monitorMs] = await time(() => replica.attach(client));
    const monitorCpuMs = lastCpuMs;
    const replicaRows = replica.table('Interface').size;
    const typedRequests = Object.fromEntries(
      Object.entries(VSWITCH_COLUMNS).map(([t, c]) => [t, [{ columns: c }]]),
    );
    const server = await serverTiming(ovs.dbSocket, typedRequests);

    // 2. 1,000 single-row transactions, pipelined.
    const targets = [...replica.table('Interface').values()].slice(0, TXNS);
    const [pipelinedMs] = await time(async () => {
      const pending: Promise<unknown>[] = [];
      for (const [n, iface] of targets.entries()) {
        const txn = await client.transaction<VswitchTables>(VSWITCH_DB);
        txn.mutate(
          'Interface',
          [['_uuid', '==', iface._uuid]],
          [['external_ids', 'insert', { 'weft-bench': String(n) }]],
        );
        pending.push(client.run(txn));
      }
      await Promise.all(pending);
    });
    const pipelinedCpuMs = lastCpuMs;
    const setArgs = targets.flatMap((t, n) => [
      '--',
      'set',
      'interface',
      t.name,
      `external_ids:vsctl-bench=${n}`,
    ]);
    const [vsctlOneCallMs] = await time(() => vsctl(...setArgs.slice(1)));
    const [vsctlSampleMs] = await time(async () => {
      for (let n = 0; n < SEQUENTIAL_SAMPLE; n++)
        await vsctl('set', 'interface', targets[n]!.name, `external_ids:seq=${n}`);
    });
    const vsctlSequentialMs = (vsctlSampleMs / SEQUENTIAL_SAMPLE) * TXNS;
    client.close();

    const lines = [
      `OVSDB benchmark: ovsdb-server 3.1, ${INTERFACES} interfaces (populated by weft in ${populateMs.toFixed(0)} ms)`,
      '',
      `initial monitor -> replica, typed columns (${replicaRows} Interface rows) ${ms(monitorMs)}   target <= 1000 ms  ${monitorMs <= 1000 ? 'OK' : 'MISSED'}`,
      `  of which weft's own CPU time (framing, parse, decode)  ${ms(monitorCpuMs)}`,
      `  ovsdb-server alone, request to first byte of reply    ${ms(server.firstByteMs)}   (${(server.bytes / 1e6).toFixed(1)} MB)`,
      `initial monitor -> replica, all columns              ${ms(fullMs)}   (weft CPU ${fullCpuMs.toFixed(0)} ms)`,
      `  ovs-vsctl list interface (${vsctlRows} rows)            ${ms(vsctlListMs)}   weft (all columns) is ${(vsctlListMs / fullMs).toFixed(1)}x faster`,
      `${TXNS} single-row transactions, pipelined            ${ms(pipelinedMs)}   target <= 1000 ms  ${pipelinedMs <= 1000 ? 'OK' : 'MISSED'}`,
      `  of which weft's own CPU time                        ${ms(pipelinedCpuMs)}`,
      `  ovs-vsctl, ${TXNS} changes in one call (1 txn)       ${ms(vsctlOneCallMs)}`,
      `  ovs-vsctl, one call per change (${SEQUENTIAL_SAMPLE} sampled, x${TXNS / SEQUENTIAL_SAMPLE}) ${ms(vsctlSequentialMs)}   weft is ${(vsctlSequentialMs / pipelinedMs).toFixed(1)}x faster`,
    ];
    lines.push(
      '',
      `load average while running: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (${cpus().length} CPUs)`,
    );
    console.log(lines.join('\n'));
  } finally {
    await ovs.stop();
  }
}

await main();
