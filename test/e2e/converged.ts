import { isOwned } from '../../controller/pipeline/cookies.js';
import type { Desired } from '../../controller/pipeline/flow.js';
import { isOwnedGroup } from '../../controller/pipeline/groups.js';
import { isOwnedMeter } from '../../controller/pipeline/meters.js';
import { bucketsKey, flowKey, instructionsKey } from '../../controller/reconcile/canonical.js';
import type { FlowText, GroupText } from '../../southbound/openflow/text/index.js';
import { formatFlow, formatGroup, parseFlow, parseGroup } from '../../southbound/openflow/text/index.js';
import type { Hypervisor } from '../lab/hypervisor.js';
import type { Lab } from '../lab/topology.js';

/**
 * "At the end, dump-flows and dump-groups on every bridge equal the desired state exactly": the
 * proof reads what each bridge of each hypervisor really holds (ovs-ofctl text, parsed with the
 * product's text parser) and compares it with what the engine last computed for that datapath,
 * by the reconciler's canonical keys. A flow counts as present only when table, priority, match,
 * cookie and instructions all agree, so a flow with the right match and wrong actions shows up as
 * one missing (the desired one) plus one stale (the one on the switch). Only weft-owned flows
 * (cookie tag) and groups (id nibble) can be stale; anything else is listed as foreign.
 */

/** What the check needs from the engine (controller/engine/engine.ts). */
export interface DesiredSource {
  desired(dpid: string): Desired | undefined;
}

export interface BridgeReport {
  hypervisor: string;
  bridge: string;
  /** The datapath id OVSDB reports for the bridge. */
  dpid: string;
  /** Desired flows/groups the bridge does not hold exactly (ovs-ofctl text of the desired one). */
  missingFlows: string[];
  missingGroups: string[];
  /** Desired meters the bridge lacks or holds with another rate/burst, and weft meters it should not hold. */
  missingMeters: string[];
  staleMeters: string[];
  /** Weft-owned flows/groups the bridge holds but the desired state does not (as dumped). */
  staleFlows: string[];
  staleGroups: string[];
  /** Flows/groups weft does not own: allowed, listed for the record. */
  foreignFlows: string[];
  foreignGroups: string[];
  /** Something that keeps the comparison from being made (no desired state, unparsable line). */
  problems: string[];
}

export interface Convergence {
  equal: boolean;
  bridges: BridgeReport[];
}

/** The bridge weft programs on every hypervisor; the others (br-phy, tor-*) must hold no weft state. */
const INTEGRATION_BRIDGE = 'br-int';

const exactFlowKey = (f: Pick<FlowText, 'tableId' | 'priority' | 'match' | 'instructions' | 'cookie'>) =>
  `${flowKey(f)} cookie=0x${(f.cookie ?? 0n).toString(16)} ${instructionsKey(f.instructions)}`;
const exactGroupKey = (g: GroupText) => `${g.groupId} ${g.type} ${bucketsKey(g.buckets)}`;

function dumpLines(text: string, marker: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes(marker));
}

/** Parses each line; a line the product's parser rejects becomes a problem, not a crash. */
function parseAll<T>(lines: string[], parse: (l: string) => T, problems: string[]): Array<[string, T]> {
  const out: Array<[string, T]> = [];
  for (const line of lines) {
    try {
      out.push([line, parse(line)]);
    } catch (err) {
      problems.push(`cannot parse dumped line '${line}': ${(err as Error).message}`);
    }
  }
  return out;
}

/** Compares one bridge with a desired state (empty for bridges weft does not program). */
export async function checkBridge(
  hv: Hypervisor,
  bridge: string,
  engine: DesiredSource,
): Promise<BridgeReport> {
  const dpid = JSON.parse((await hv.vsctl('get', 'bridge', bridge, 'datapath_id')).trim()) as string;
  const report: BridgeReport = {
    hypervisor: hv.name,
    bridge,
    dpid,
    missingFlows: [],
    missingGroups: [],
    missingMeters: [],
    staleMeters: [],
    staleFlows: [],
    staleGroups: [],
    foreignFlows: [],
    foreignGroups: [],
    problems: [],
  };
  let desired: Desired = { flows: [], groups: [] };
  if (bridge === INTEGRATION_BRIDGE) {
    const d = engine.desired(dpid);
    if (d) desired = d;
    else report.problems.push(`the engine has no desired state for ${hv.name}/${bridge} (dpid ${dpid})`);
  }
  const [flowText, groupText, meterText] = await Promise.all([
    hv.ofctl('--no-stats', '--no-names', 'dump-flows', hv.mgmt(bridge)),
    hv.ofctl('--no-names', 'dump-groups', hv.mgmt(bridge)),
    hv.ofctl('dump-meters', hv.mgmt(bridge)),
  ]);
  const haveMeters = parseMeterDump(meterText);
  const wantMeters = new Map(
    (desired.meters ?? []).map((m) => [
      m.meterId,
      `${m.unit === 'pktps' ? '(pktps) ' : ''}${m.kbps}/${m.burstKb}`,
    ]),
  );
  for (const [id, v] of wantMeters) {
    if (haveMeters.get(id) !== v) report.missingMeters.push(`meter=${id} kbps=${v}`);
  }
  for (const [id, v] of haveMeters) {
    if (isOwnedMeter(id) && !wantMeters.has(id)) report.staleMeters.push(`meter=${id} ${v}`);
  }
  const flows = parseAll(dumpLines(flowText, 'actions='), parseFlow, report.problems);
  const groups = parseAll(dumpLines(groupText, 'group_id='), parseGroup, report.problems);

  const haveFlows = new Set(flows.map(([, f]) => exactFlowKey(f)));
  const wantFlows = new Set(desired.flows.map(exactFlowKey));
  for (const f of desired.flows) {
    if (!haveFlows.has(exactFlowKey(f))) report.missingFlows.push(formatFlow(f));
  }
  for (const [line, f] of flows) {
    if (!isOwned(f.cookie ?? 0n)) report.foreignFlows.push(line);
    else if (!wantFlows.has(exactFlowKey(f))) report.staleFlows.push(line);
  }

  const haveGroups = new Set(groups.map(([, g]) => exactGroupKey(g)));
  const wantGroups = new Set(desired.groups.map(exactGroupKey));
  for (const g of desired.groups) {
    if (!haveGroups.has(exactGroupKey(g))) report.missingGroups.push(formatGroup(g));
  }
  for (const [line, g] of groups) {
    if (!isOwnedGroup(g.groupId)) report.foreignGroups.push(line);
    else if (!wantGroups.has(exactGroupKey(g))) report.staleGroups.push(line);
  }
  return report;
}

const isEqual = (r: BridgeReport) =>
  r.missingFlows.length + r.missingGroups.length + r.staleFlows.length + r.staleGroups.length === 0 &&
  r.missingMeters.length + r.staleMeters.length === 0 &&
  r.problems.length === 0;

/**
 * `ovs-ofctl dump-meters` text -> meter id -> `rate/burst` of its drop band (kbps meters with a
 * burst, as weft makes them, or `(pktps) rate/burst` for packet meters; any other shape is written
 * so that it never equals a desired one).
 */
export function parseMeterDump(text: string): Map<number, string> {
  const out = new Map<number, string>();
  let id: number | undefined;
  let shape = '';
  for (const line of text.split('\n').map((l) => l.trim())) {
    const head = /^meter=(\d+)\s+(.*)bands=$/.exec(line);
    if (head) {
      id = Number(head[1]);
      const flags = head[2]!.split(/\s+/).filter(Boolean);
      // Rate in kbit/s (weft's rate limits) or packets/s (the security-group log's, `(pktps) `).
      const burst = flags.includes('burst');
      shape =
        burst && flags.includes('kbps')
          ? ''
          : burst && flags.includes('pktps')
            ? '(pktps) '
            : `(${flags.join(' ')}) `;
      out.set(id, `${shape}no band`);
      continue;
    }
    const band = /^type=(\w+) rate=(\d+) burst_size=(\d+)/.exec(line);
    if (band && id !== undefined) {
      const prev = out.get(id)!;
      const v = band[1] === 'drop' ? `${band[2]}/${band[3]}` : `${band[1]} ${band[2]}/${band[3]}`;
      out.set(id, prev.endsWith('no band') ? `${shape}${v}` : `${prev} + ${v}`);
    }
  }
  return out;
}

/** Every bridge of every hypervisor of the lab, compared once (no waiting). */
export async function checkConverged(lab: Lab, engine: DesiredSource): Promise<Convergence> {
  const bridges: BridgeReport[] = [];
  for (const hv of lab.hypervisors) {
    const names = (await hv.vsctl('list-br')).split('\n').filter((n) => n.length > 0);
    if (!names.includes(INTEGRATION_BRIDGE)) {
      throw new Error(`${hv.name} has no ${INTEGRATION_BRIDGE} (bridges: ${names.join(', ')})`);
    }
    for (const bridge of names) bridges.push(await checkBridge(hv, bridge, engine));
  }
  return { equal: bridges.every(isEqual), bridges };
}

/** A readable account of every difference (empty sections left out). */
export function formatConvergence(c: Convergence): string {
  const out: string[] = [c.equal ? 'converged: every bridge equals its desired state' : 'NOT converged'];
  for (const r of c.bridges) {
    const sections: Array<[string, string[]]> = [
      ['missing flows', r.missingFlows],
      ['stale flows', r.staleFlows],
      ['missing groups', r.missingGroups],
      ['stale groups', r.staleGroups],
      ['missing meters', r.missingMeters],
      ['stale meters', r.staleMeters],
      ['problems', r.problems],
    ];
    const bad = sections.filter(([, l]) => l.length > 0);
    out.push(
      `${r.hypervisor}/${r.bridge} (dpid ${r.dpid}): ${bad.length ? 'DIFFERS' : 'equal'}` +
        ` (${r.foreignFlows.length} foreign flows, ${r.foreignGroups.length} foreign groups)`,
    );
    for (const [name, lines] of bad) {
      out.push(`  ${name}:`);
      for (const l of lines) out.push(`    ${l}`);
    }
  }
  return out.join('\n');
}

/**
 * Waits until every bridge equals its desired state (the engine may still be applying the last
 * change when a scenario ends) and returns the report; throws with the full account of the last
 * difference when it never does. A real stale or missing flow persists, so waiting hides nothing.
 */
export async function expectConverged(
  lab: Lab,
  engine: DesiredSource,
  timeoutMs = 20_000,
): Promise<Convergence> {
  const deadline = Date.now() + timeoutMs;
  let last: Convergence | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await checkConverged(lab, engine);
      if (last.equal) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const why = last ? formatConvergence(last) : `no check succeeded: ${(lastError as Error)?.message}`;
  throw new Error(`bridges did not converge within ${timeoutMs} ms\n${why}`);
}
