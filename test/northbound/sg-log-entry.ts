import type { SgLogEntry } from '../../controller/sg-log/sg-log-book.js';

/** One security-group log entry as the PACKET_IN service makes it; `over` changes what a test is about. */
export const sampleEntry = (over: Partial<Omit<SgLogEntry, 'seq'>> = {}): Omit<SgLogEntry, 'seq'> => ({
  at: '2026-12-04T17:03:11.201Z',
  verdict: 'denied',
  direction: 'ingress',
  chassis: 'hv2',
  endpointId: 'blue2',
  tenantId: 't1',
  networkId: 'blue',
  protocol: 'tcp',
  src: '10.0.0.1',
  dst: '10.0.0.2',
  srcPort: 43512,
  dstPort: 9090,
  ...over,
});
