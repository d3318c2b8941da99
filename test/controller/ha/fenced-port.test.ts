import { describe, expect, it } from 'vitest';
import type { DatapathPort } from '../../../controller/engine/datapath-port.js';
import { fencedPort, NotLeaderError } from '../../../controller/ha/fenced-port.js';

describe('fencedPort', () => {
  it('writes only while leading; reads always', async () => {
    const calls: string[] = [];
    const port: DatapathPort = {
      dpid: '0000000000000001',
      dumpFlows: async () => {
        calls.push('dumpFlows');
        return [];
      },
      dumpGroups: async () => {
        calls.push('dumpGroups');
        return [];
      },
      dumpMeters: async () => {
        calls.push('dumpMeters');
        return [];
      },
      applyAtomically: async () => void calls.push('apply'),
      applyMeters: async () => void calls.push('applyMeters'),
    };
    let leading = true;
    const fenced = fencedPort(port, () => leading);
    await fenced.applyAtomically([]);
    await fenced.applyMeters([]);
    leading = false;
    await expect(fenced.applyAtomically([])).rejects.toThrow(NotLeaderError);
    await expect(fenced.applyAtomically([])).rejects.toThrow(
      /switch 0000000000000001: this instance is not the HA leader/,
    );
    await expect(fenced.applyMeters([])).rejects.toThrow(NotLeaderError);
    await fenced.dumpFlows();
    await fenced.dumpGroups();
    await fenced.dumpMeters();
    expect(calls).toEqual(['apply', 'applyMeters', 'dumpFlows', 'dumpGroups', 'dumpMeters']);
    expect(fenced.dpid).toBe(port.dpid);
  });
});
