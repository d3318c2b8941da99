import { startCapture } from './capture.js';
import type { Lab } from './topology.js';

type Call = (method: string, path: string, body?: unknown) => Promise<unknown>;

/**
 * The demo's port mirroring line: red1's traffic (both directions) copied to reddb, a VM of
 * another red network on the other hypervisor; tcpdump in reddb counts the copies of three pings
 * red1 -> red2 (copies are frames addressed to others: only a capture sees them). The mirror is
 * deleted again. Returns the line and whether it is what the intent says.
 */
export async function mirrorProbe(lab: Lab, call: Call): Promise<{ line: string; ok: boolean }> {
  await call('PUT', '/v1/mirrors/demo-tap?wait=applied&timeout=20s', {
    source: 'red1',
    destination: 'reddb',
    direction: 'both',
  });
  try {
    const capture = await startCapture(lab.vm('reddb').netns, 'eth0', ['-Q', 'in', 'icmp']);
    let lines: string[] = [];
    try {
      await lab.ping('red1', '10.0.0.2', { count: 3, intervalMs: 200, timeoutS: 1 });
      await new Promise((r) => setTimeout(r, 300)); // the last copies cross the tunnel
    } finally {
      lines = await capture.stop();
    }
    const requests = lines.filter((l) => l.includes('10.0.0.1 > 10.0.0.2: ICMP echo request')).length;
    const replies = lines.filter((l) => l.includes('10.0.0.2 > 10.0.0.1: ICMP echo reply')).length;
    const ok = requests === 3 && replies === 3;
    return {
      line: `mirror: red1 copied to reddb (red-db network, hv2): tcpdump there saw ${requests} of 3 echo requests and ${replies} of 3 replies of red1 -> red2${ok ? '' : ' (SURPRISE)'}`,
      ok,
    };
  } finally {
    await call('DELETE', '/v1/mirrors/demo-tap?wait=applied&timeout=20s');
  }
}
