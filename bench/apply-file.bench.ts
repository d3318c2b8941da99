/**
 * npm run bench:apply-file: reading a large intent file, as `weft apply -f` and `weft serve
 * --restore` do (northbound/intent-file.ts). ENDPOINTS (default 100,000) endpoints written by
 * `weft export`'s own writer (YAML), read by parseApplyFile (js-yaml, YAML 1.2 core schema);
 * baselines in the same run: the `yaml` package weft read with before (parseAllDocuments + toJS,
 * what export writes with) and the same intent as JSON (JSON.parse). Median of RUNS (default 3).
 */
import { parseAllDocuments } from 'yaml';
import { exportYaml } from '../northbound/cli/export-command.js';
import { parseApplyFile } from '../northbound/intent-file.js';
import { median } from './stats.js';

const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 3);

const hex = (n: number) => n.toString(16).padStart(2, '0');
const ops = Array.from({ length: ENDPOINTS }, (_, i) => ({
  op: 'put',
  kind: 'endpoint',
  id: `ep-${i}`,
  body: {
    networkId: 'n1',
    mac: `02:00:00:${hex((i >> 16) & 255)}:${hex((i >> 8) & 255)}:${hex(i & 255)}`,
    ips: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
    ifaceId: `vm-${i}`,
    name: `vm ${i}`,
  },
}));
const yamlText = await exportYaml(ops, '1', new Date());
const jsonText = JSON.stringify(ops.map((o) => ({ kind: o.kind, id: o.id, ...o.body })));

async function time(what: string, read: () => Promise<unknown[]> | unknown[]): Promise<number> {
  const ms: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    const items = await read();
    ms.push(performance.now() - t0);
    if (items.length !== ENDPOINTS) throw new Error(`${what}: read ${items.length} items, not ${ENDPOINTS}`);
  }
  console.log(
    `${what}: ${median(ms).toFixed(0)} ms, median of ${RUNS} (${ms.map((x) => x.toFixed(0)).join(', ')})`,
  );
  return median(ms);
}

console.log(
  `${ENDPOINTS} endpoints: YAML ${(yamlText.length / 1e6).toFixed(1)} MB, JSON ${(jsonText.length / 1e6).toFixed(1)} MB`,
);
const weft = await time('weft (js-yaml, core schema)', () => parseApplyFile(yamlText));
const before = await time('baseline: the yaml package', () =>
  parseAllDocuments(yamlText).flatMap((d) => d.toJS() as unknown[]),
);
const json = await time('baseline: the same as JSON', () => parseApplyFile(jsonText));
console.log(
  `reading ${ENDPOINTS} endpoints of YAML: ${weft.toFixed(0)} ms, ${(before / weft).toFixed(1)}x faster than the yaml package (${before.toFixed(0)} ms), ${(weft / json).toFixed(1)}x the JSON read (${json.toFixed(0)} ms)`,
);
