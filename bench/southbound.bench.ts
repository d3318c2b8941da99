/**
 * Southbound benchmark (npm run bench:southbound): weft's OpenFlow sessions against a real
 * ovs-vswitchd 3.1, each figure next to a baseline measured in the same run on the same kind of
 * bridge. Needs root (OVS runs in a network namespace; see test/lab/ovs.ts).
 *
 * 1. Install 100,000 distinct overlay flows into one bridge, confirmed by a barrier,
 *    vs `ovs-ofctl -O OpenFlow13 --bundle add-flows` of the same flows. Target: >= 1.5x its rate.
 * 2. 50 bridges connect and each receives 1,000 flows, all confirmed. Target: <= 1 s.
 * 3. Dump 100,000 flows into decoded flows vs `ovs-ofctl -O OpenFlow13 dump-flows`. Target: <= its time.
 *    Two weft figures: `dumpFlows` (the generic FlowStats of every flow) and `dumpFlowsKeyed` with
 *    the reconciler's flow keys (what a reconnect uses: codec/flow-dump.ts + reconcile/wire-key.ts).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { dumpedFlowKey } from '../controller/reconcile/wire-key.js';
import { startOpenFlowServer } from '../southbound/openflow/session/openflow-server.js';
import { dumpFlows, dumpFlowsKeyed } from '../southbound/openflow/session/operations.js';
import { defaultSessionOptions } from '../southbound/openflow/session/options.js';
import type { SwitchSession } from '../southbound/openflow/session/switch-session.js';
import { run } from '../test/lab/exec.js';
import { startOvs } from '../test/lab/ovs.js';
import {
  addBridgesWithController,
  dpidOf,
  linkController,
  setController,
} from '../test/southbound/openflow/session/lab-controller.js';
import { overlayFlowMod, overlayFlowText } from '../test/southbound/openflow/session/overlay-flows.js';

const FLOWS = 100_000;
const BRIDGES = 50;
const FLOWS_PER_BRIDGE = 1_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
/** CPU ms this process used since `from` (user + system). */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};
/** CPU ms ovs-vswitchd has used so far (utime + stime from /proc, 100 ticks/s). */
async function vswitchdCpuMs(dir: string): Promise<number> {
  const pid = (await readFile(join(dir, 'vswitchd.pid'), 'utf8')).trim();
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) * 10;
}
const fmt = (n: number) => n.toFixed(0).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

async function main(): Promise<void> {
  const ovs = await startOvs();
  const dir = await mkdtemp(join(tmpdir(), 'weft-bench-sb-'));
  const server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path: join(dir, 'of.sock') }], tls: null, session: defaultSessionOptions },
    pino({ level: 'warn' }),
  );
  try {
    const target = await linkController(ovs, join(dir, 'of.sock'));
    const connect = async (br: string): Promise<SwitchSession> => {
      await ovs.addBridge(br);
      await setController(ovs, [br], target);
      return server.registry.waitFor(await dpidOf(ovs, br), 30_000);
    };
    const countFlows = async (br: string) =>
      (await ovs.ofctl('-O', 'OpenFlow13', 'dump-aggregate', ovs.mgmt(br), 'table=20')).match(
        /flow_count=(\d+)/,
      )?.[1];

    // ---- 1. install 100k flows ----------------------------------------------------------------
    const flowFile = join(dir, 'flows.txt');
    await writeFile(flowFile, `${Array.from({ length: FLOWS }, (_, i) => overlayFlowText(i)).join('\n')}\n`);
    const mods = Array.from({ length: FLOWS }, (_, i) => overlayFlowMod(i));
    let bestOfctl = Number.POSITIVE_INFINITY;
    let bestWeft = Number.POSITIVE_INFINITY;
    let cpu = { weft: 0, ovsForWeft: 0, ovsForOfctl: 0 };
    let lastWeftBridge = '';
    for (let r = 0; r < ROUNDS; r++) {
      const brBase = `br-ofctl${r}`;
      await ovs.addBridge(brBase);
      let ovsCpu0 = await vswitchdCpuMs(ovs.dir);
      let t0 = process.hrtime.bigint();
      await run('ovs-ofctl', ['-O', 'OpenFlow13', '--bundle', 'add-flows', ovs.mgmt(brBase), flowFile]);
      const tOfctl = ms(t0);
      const ovsForOfctl = (await vswitchdCpuMs(ovs.dir)) - ovsCpu0;
      if ((await countFlows(brBase)) !== String(FLOWS))
        throw new Error(`ovs-ofctl installed ${await countFlows(brBase)} flows`);
      await ovs.vsctl('del-br', brBase);

      const brWeft = `br-weft${r}`;
      const sw = await connect(brWeft);
      ovsCpu0 = await vswitchdCpuMs(ovs.dir);
      const cpu0 = process.cpuUsage();
      t0 = process.hrtime.bigint();
      const errors = await sw.sendConfirmed(mods, { timeoutMs: 120_000 });
      const tWeft = ms(t0);
      const weftCpu = cpuMs(cpu0);
      const ovsForWeft = (await vswitchdCpuMs(ovs.dir)) - ovsCpu0;
      if (errors.length) throw new Error(`switch refused ${errors.length} flows: ${errors[0]!.message}`);
      if ((await countFlows(brWeft)) !== String(FLOWS))
        throw new Error(`weft installed ${await countFlows(brWeft)} flows`);
      console.log(
        `install round ${r + 1}: ovs-ofctl --bundle ${fmt(tOfctl)} ms (ovs-vswitchd CPU ${fmt(ovsForOfctl)} ms), ` +
          `weft ${fmt(tWeft)} ms (weft CPU ${fmt(weftCpu)} ms, ovs-vswitchd CPU ${fmt(ovsForWeft)} ms)`,
      );
      bestOfctl = Math.min(bestOfctl, tOfctl);
      if (tWeft < bestWeft) cpu = { weft: weftCpu, ovsForWeft, ovsForOfctl };
      bestWeft = Math.min(bestWeft, tWeft);
      if (lastWeftBridge) await ovs.vsctl('del-br', lastWeftBridge);
      lastWeftBridge = brWeft;
    }
    const rateOfctl = FLOWS / (bestOfctl / 1000);
    const rateWeft = FLOWS / (bestWeft / 1000);
    const installRatio = rateWeft / rateOfctl;

    // ---- 3. dump 100k flows (from the last weft bridge) -----------------------------------------
    let bestDumpOfctl = Number.POSITIVE_INFINITY;
    let bestDumpWeft = Number.POSITIVE_INFINITY;
    let bestDumpCpu = 0;
    let bestKeyed = Number.POSITIVE_INFINITY;
    let bestKeyedCpu = 0;
    const sw = server.registry.get(await dpidOf(ovs, lastWeftBridge))!;
    for (let r = 0; r < ROUNDS + 1; r++) {
      let t0 = process.hrtime.bigint();
      const text = await run('ovs-ofctl', ['-O', 'OpenFlow13', 'dump-flows', ovs.mgmt(lastWeftBridge)]);
      const tO = ms(t0);
      const lines = text.split('\n').filter((l) => l.includes('actions=')).length;
      const cpu0 = process.cpuUsage();
      t0 = process.hrtime.bigint();
      const flows = await dumpFlows(sw);
      const tW = ms(t0);
      const weftCpu = cpuMs(cpu0);
      if (flows.length !== FLOWS || lines !== FLOWS)
        throw new Error(`dump sizes: weft ${flows.length}, ofctl ${lines}`);
      const cpuK = process.cpuUsage();
      t0 = process.hrtime.bigint();
      const keyed = await dumpFlowsKeyed(sw, dumpedFlowKey);
      const tK = ms(t0);
      const keyedCpu = cpuMs(cpuK);
      if (keyed.length !== FLOWS) throw new Error(`keyed dump: ${keyed.length} flows`);
      console.log(
        `dump round ${r + 1}: ovs-ofctl dump-flows ${fmt(tO)} ms, weft dumpFlows ${fmt(tW)} ms (weft CPU ${fmt(weftCpu)} ms), ` +
          `weft dumpFlowsKeyed with flow keys ${fmt(tK)} ms (weft CPU ${fmt(keyedCpu)} ms)`,
      );
      if (tK < bestKeyed) bestKeyedCpu = keyedCpu;
      bestKeyed = Math.min(bestKeyed, tK);
      bestDumpOfctl = Math.min(bestDumpOfctl, tO);
      if (tW < bestDumpWeft) bestDumpCpu = weftCpu;
      bestDumpWeft = Math.min(bestDumpWeft, tW);
    }
    await ovs.vsctl('del-br', lastWeftBridge);

    // ---- 2. 50 bridges connect, 1,000 flows each ------------------------------------------------
    const names = Array.from({ length: BRIDGES }, (_, i) => `brs${i}`);
    const perBridge = Array.from({ length: FLOWS_PER_BRIDGE }, (_, i) => overlayFlowMod(i));
    let firstUp = 0n;
    let lastUp = 0n;
    let ups = 0;
    const scaleCpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    // Each bridge gets its flows the moment its session is up; the clock stops at the last barrier.
    const allDone = new Promise<void>((resolve, reject) => {
      let n = 0;
      server.registry.on('switch-up', (s) => {
        if (!firstUp) firstUp = process.hrtime.bigint();
        if (++ups === BRIDGES) lastUp = process.hrtime.bigint();
        s.sendConfirmed(perBridge).then((errs) => {
          if (errs.length) reject(new Error(`bridge ${s.dpid} refused ${errs.length} flows`));
          if (++n === BRIDGES) resolve();
        }, reject);
      });
    });
    // One transaction creates the 50 bridges already pointed at weft: OVS dials as soon as each exists.
    await addBridgesWithController(ovs, names, target);
    await allDone;
    const tScale = ms(t0);
    const scaleCpu = cpuMs(scaleCpu0);
    const tScaleFromFirst = Number(process.hrtime.bigint() - firstUp) / 1e6;
    const tAllUp = Number(lastUp - firstUp) / 1e6;
    for (const n of names.slice(0, 3)) {
      if ((await countFlows(n)) !== String(FLOWS_PER_BRIDGE))
        throw new Error(`${n} has ${await countFlows(n)} flows`);
    }

    const report = [
      `install ${fmt(FLOWS)} overlay flows + barrier: weft ${fmt(bestWeft)} ms (${fmt(rateWeft)} flows/s) vs ovs-ofctl --bundle add-flows ${fmt(bestOfctl)} ms (${fmt(rateOfctl)} flows/s): ${installRatio.toFixed(2)}x (target >= 1.5x); CPU: weft ${fmt(cpu.weft)} ms, ovs-vswitchd ${fmt(cpu.ovsForWeft)} ms (vs ${fmt(cpu.ovsForOfctl)} ms for ovs-ofctl's bundle)`,
      `load average at the end: ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')} on ${(await import('node:os')).cpus().length} CPUs`,
      `${BRIDGES} bridges connect + ${fmt(FLOWS_PER_BRIDGE)} flows each confirmed: ${fmt(tScaleFromFirst)} ms from the first switch up (all ${BRIDGES} up after ${fmt(tAllUp)} ms; ${fmt(tScale)} ms including ovs-vsctl creating the bridges; weft CPU ${fmt(scaleCpu)} ms) (target <= 1000 ms)`,
      `dump ${fmt(FLOWS)} flows decoded: weft ${fmt(bestDumpWeft)} ms (weft CPU ${fmt(bestDumpCpu)} ms) vs ovs-ofctl dump-flows ${fmt(bestDumpOfctl)} ms: ${(bestDumpOfctl / bestDumpWeft).toFixed(2)}x (target: weft <= ovs-ofctl)`,
      `dump ${fmt(FLOWS)} flows keyed for the reconciler (dumpFlowsKeyed + flow keys): weft ${fmt(bestKeyed)} ms (weft CPU ${fmt(bestKeyedCpu)} ms) vs ovs-ofctl dump-flows ${fmt(bestDumpOfctl)} ms: ${(bestDumpOfctl / bestKeyed).toFixed(2)}x`,
    ];
    console.log(`\n${report.join('\n')}`);
  } finally {
    await server.close();
    await ovs.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
