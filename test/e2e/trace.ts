import type { Hypervisor } from '../lab/hypervisor.js';

/**
 * `ovs-appctl ofproto/trace` on a lab hypervisor, read into its steps so a test can say which
 * table decided a packet's fate and by which flow (cookie). A trace has one section per pass
 * through the pipeline: conntrack recirculations start a new section ("Resuming from table N").
 */
export interface TraceStep {
  /** The bridge whose pipeline the step belongs to (br-int, or br-phy after tunnel encapsulation). */
  bridge: string;
  table: number;
  /** The matching flow's match as OVS prints it ("" for a table-miss flow). */
  match: string;
  priority: number;
  cookie: bigint;
  /** The flow's actions and OVS's remarks ("-> ...") under it, trimmed. */
  actions: string[];
}

export interface TraceSection {
  steps: TraceStep[];
  /** What the datapath does with the packet in this pass ("drop", "ct(...),recirc(...)", ...). */
  datapathActions: string;
}

export interface Trace {
  text: string;
  sections: TraceSection[];
  /** The last step of the last pass: where the packet's fate was decided. */
  last: TraceStep;
  /** Datapath actions of the last pass. */
  finalActions: string;
}

const STEP = /^\s*(\d+)\. (?:(.*), )?priority (\d+)(?:, cookie (0x[0-9a-f]+))?$/;
const BRIDGE = /^\s*bridge\("([^"]+)"\)$/;

export function parseTrace(text: string): Trace {
  const sections: TraceSection[] = [];
  let steps: TraceStep[] = [];
  let step: TraceStep | undefined;
  let bridge = '';
  for (const line of text.split('\n')) {
    const b = BRIDGE.exec(line);
    if (b) {
      bridge = b[1]!;
      step = undefined;
      continue;
    }
    const m = STEP.exec(line);
    if (m) {
      step = {
        bridge,
        table: Number(m[1]),
        match: m[2] ?? '',
        priority: Number(m[3]),
        cookie: BigInt(m[4] ?? '0x0'),
        actions: [],
      };
      steps.push(step);
      continue;
    }
    if (line.startsWith('Datapath actions: ')) {
      sections.push({ steps, datapathActions: line.slice('Datapath actions: '.length).trim() });
      steps = [];
      step = undefined;
      continue;
    }
    if (line.startsWith('Final flow:') || line.startsWith('Megaflow:') || line.trim() === '') {
      step = undefined;
      continue;
    }
    if (step && /^\s+\S/.test(line)) step.actions.push(line.trim());
  }
  const lastSection = sections.at(-1);
  const last = lastSection?.steps.at(-1);
  if (!lastSection || !last) throw new Error(`no pipeline step and datapath actions in trace:\n${text}`);
  return { text, sections, last, finalActions: lastSection.datapathActions };
}

/** Traces `flow` (ofproto/trace syntax) through a hypervisor's br-int; `extra` e.g. `--ct-next est|trk`. */
export async function traceOn(hv: Hypervisor, flow: string, ...extra: string[]): Promise<Trace> {
  const text = await hv.appctl('ofproto/trace', ...extra, 'br-int', flow);
  if (process.env.WEFT_TRACE) console.log(text);
  return parseTrace(text);
}

/** The steps of br-int only, across all passes, as `table/cookie` for compact assertions. */
export const pathOf = (t: Trace): string[] =>
  t.sections.flatMap((s) =>
    s.steps.filter((x) => x.bridge === 'br-int').map((x) => `${x.table}/0x${x.cookie.toString(16)}`),
  );
