import { expect, it } from 'vitest';
import { formatMatrix, runDemo } from '../lab/demo-scenario.js';

// The demo is part of the suite: every path it prints must be as the intent says.
it('runs the demo with no surprises: isolation with overlapping IPs, a security group, a VLAN binding', async () => {
  const lines: string[] = [];
  const { probes, surprises } = await runDemo((l) => lines.push(l));
  if (surprises) console.log(formatMatrix(probes));
  expect(probes.length).toBe(9);
  expect(surprises).toBe(0);
}, 180_000);
